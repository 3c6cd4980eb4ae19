"""Usage and cost reports (issue 19): pure period/block math (`periods`) and ccusage-shaped
aggregation (`report`). Queries live in `agent_history.read.usage`."""
