"""h3learn: a readable HTTP/3 (RFC 9114) and QPACK (RFC 9204) implementation that records
every frame, instruction and table change as an event, for learning and teaching."""

__version__ = "0.1.0"
