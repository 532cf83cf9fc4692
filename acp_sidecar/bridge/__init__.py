"""Render intents (card views) to ACP ``tool_call`` / ``tool_call_update`` (arrives with the bridge issue)."""
