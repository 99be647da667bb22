"""``python -m agentcredit`` runs the command-line interface."""

from agentcredit.cli.app import main

main()
