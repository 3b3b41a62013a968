from inspector.cli import entry

entry()
