"""Shareable transcripts of stored sessions: one self-contained HTML page, or GitHub Markdown.

Drawn from the same update stream ``session/load`` sends; everything from the log is
untrusted and escaped.
"""
