"""Developer tools that are not part of the installed packages (run from the repository root)."""
