"""The search-text analysis shared by the writer and the search (pure): the scripts and symbols
the keyword index treats specially, and the Python twin of the SQL preprocessing."""
