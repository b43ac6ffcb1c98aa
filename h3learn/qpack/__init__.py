"""RFC 9204: the sans-IO QPACK core (tables, instructions, field lines, encoder, decoder)."""
