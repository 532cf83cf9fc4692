"""ACP v1 wire types and the one cattrs converter."""
