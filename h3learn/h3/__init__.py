"""RFC 9114: the sans-IO HTTP/3 core (frames, streams, messages, the connection)."""
