"""The ACP v2 side of a connection: its handlers and its wire mapping.

Imported only once a connection negotiated v2 (:mod:`acp_sidecar.server.negotiation`).
"""
