"""claude.ai data export (`conversations.json`)."""
