"""ChatGPT data export (conversations.json): see `parser`."""
