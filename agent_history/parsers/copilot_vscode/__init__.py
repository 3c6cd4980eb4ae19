"""VS Code Copilot Chat: ``chatSessions/*.json`` documents and the "copilot-agent" event log."""
