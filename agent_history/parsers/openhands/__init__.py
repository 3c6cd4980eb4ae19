"""OpenHands V1 conversations (`parser`)."""
