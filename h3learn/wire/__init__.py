"""The wire formats under HTTP/3 and QPACK: RFC 9000 §16 varints, RFC 7541 §5 prefixed
integers, string literals and Huffman, and the span reader/writer that label each field."""
