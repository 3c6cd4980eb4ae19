"""`python -m agent_history` = the `agent-history` command."""

from agent_history.cli.app import main

main()
