"""The ACP v2 wire mapping of the bridge: the core's (v1-shaped) updates in their v2 form.

Imported only by a connection that negotiated v2 (:mod:`acp_sidecar.server.negotiation`).
"""
