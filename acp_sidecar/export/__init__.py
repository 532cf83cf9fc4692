"""Shareable transcripts of stored sessions: one self-contained HTML page, or GitHub Markdown.

Invariant: an export is drawn from the same ``session/update`` stream ``session/load`` sends
(through the bridge's one translator) plus a small read-only view of the log's header and
record times; everything it takes from the log is untrusted and escaped.
"""
