"""The turn loop and its drivers."""
