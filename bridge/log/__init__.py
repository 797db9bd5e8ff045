"""The adjudication log: every logged ruling kept per world and game session."""
