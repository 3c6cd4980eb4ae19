"""Gemini CLI chat recordings (`~/.gemini/tmp/<project hash>/chats/session-*.json[l]`)."""
