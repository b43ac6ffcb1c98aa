"""RFC 7541 Appendix B and §5.2: Huffman coding of string literals (RFC 9204 §4.1.2).

Encoding writes each byte's code (from `HUFFMAN_CODE`) one after another, most significant
bit first, and fills the last byte with the high bits of the EOS code, which are all ones.

Decoding follows the codes bit by bit down a binary tree whose leaves are the 257 symbols.
Walking one bit at a time in Python is slow, so at import time the tree is turned into
tables: first one that consumes four bits (a nibble) at a time (for every internal node of
the tree and every nibble: the node the walk reaches and the symbol, if any, it completed on
the way; no code is shorter than five bits, so a nibble completes at most one), then, by
joining two nibble steps, one that consumes a whole byte at a time.

Three rules make an encoded string malformed (RFC 7541 §5.2):
- the EOS symbol decoded inside the string;
- padding longer than 7 bits;
- padding that is not the most significant bits of EOS (i.e. not all ones).
"""

from h3learn.wire.errors import MalformedInput
from h3learn.wire.huffman_code import EOS, HUFFMAN_CODE

RULE_EOS = "Huffman-encoded string contains the EOS symbol"
RULE_PADDING_TOO_LONG = "Huffman padding is longer than 7 bits"
RULE_PADDING_NOT_EOS = "Huffman padding is not the most significant bits of EOS (all ones)"


#: The length in bits of each byte's code.
CODE_LENGTHS = [length for _, length in HUFFMAN_CODE[:256]]


def huffman_encoded_length(data: bytes) -> int:
    """Bytes that `huffman_encode` would produce for ``data``."""
    return (sum(map(CODE_LENGTHS.__getitem__, data)) + 7) // 8


def huffman_encode(data: bytes) -> bytes:
    """Encode ``data`` with the static Huffman code, padding with ones."""
    bits = 0  # every code so far, one after another, as one integer
    count = 0
    for byte in data:
        code, length = HUFFMAN_CODE[byte]
        bits = (bits << length) | code
        count += length
    padding = -count % 8
    bits = (bits << padding) | ((1 << padding) - 1)
    return bits.to_bytes((count + padding) // 8, "big")


# --- the decoding tree and the nibble table built from it -------------------------------

NO_SYMBOL = -1


def _build_tree() -> list[list[int]]:
    """The code as a binary tree: node 0 is the root; children[node] = [zero, one].

    A child is either another node's number (>= 0) or ~symbol (< 0) for a leaf.
    """
    children: list[list[int]] = [[0, 0]]
    for symbol, (code, length) in enumerate(HUFFMAN_CODE):
        node = 0
        for position in range(length - 1, -1, -1):
            bit = (code >> position) & 1
            if position == 0:
                children[node][bit] = ~symbol
            else:
                if children[node][bit] == 0:
                    children.append([0, 0])
                    children[node][bit] = len(children) - 1
                node = children[node][bit]
    return children


def _build_nibble_table(
    children: list[list[int]],
) -> tuple[list[tuple[int, int]], list[bool]]:
    """For node n and nibble v, entry [n * 16 + v] is (node reached, symbol completed).

    The second list says, for each node, whether the input may end there: at the root, or
    at most seven bits below it along a path of ones (the allowed padding).
    """
    table: list[tuple[int, int]] = []
    for start in range(len(children)):
        for nibble in range(16):
            node, symbol = start, NO_SYMBOL
            for position in (3, 2, 1, 0):
                child = children[node][(nibble >> position) & 1]
                if child < 0:
                    symbol = ~child
                    node = 0
                    if symbol == EOS:
                        break
                else:
                    node = child
            table.append((node, symbol))
    may_end = [False] * len(children)
    node = 0
    for _ in range(8):
        may_end[node] = True
        node = children[node][1]
    return table, may_end


def _build_byte_table(
    nibble_table: list[tuple[int, int]], node_count: int
) -> tuple[list[int], list[bytes]]:
    """Two nibble steps joined into one byte step, for speed.

    Entry [n * 256 + b] says where the walk from node n goes on byte b, and which symbols
    (none, one or two: codes are at least five bits long) it completes on the way. A byte
    that completes EOS leads to the extra node ``EOS_SEEN``, which every byte leads back to.
    """
    next_node: list[int] = []
    emitted: list[bytes] = []
    single = [bytes((symbol,)) for symbol in range(256)]
    for start in range(node_count + 1):
        for byte in range(256):
            if start == node_count:
                next_node.append(node_count)
                emitted.append(b"")
                continue
            middle, first = nibble_table[(start << 4) | (byte >> 4)]
            end, second = nibble_table[(middle << 4) | (byte & 0x0F)]
            if first == EOS or second == EOS:
                next_node.append(node_count)
                emitted.append(b"")
                continue
            symbols = b"" if first < 0 else single[first]
            if second >= 0:
                symbols += single[second]
            next_node.append(end)
            emitted.append(symbols)
    return next_node, emitted


_TREE = _build_tree()
_NIBBLE_TABLE, _MAY_END = _build_nibble_table(_TREE)
#: The node reached after an EOS symbol: decoding fails once the input ends.
EOS_SEEN = len(_TREE)
_NEXT_NODE, _EMITTED = _build_byte_table(_NIBBLE_TABLE, len(_TREE))


def huffman_decode(data: bytes | bytearray | memoryview) -> bytes:
    """Decode a Huffman-encoded string; raise `MalformedInput` naming the rule it breaks."""
    next_node = _NEXT_NODE
    emitted = _EMITTED
    out = bytearray()
    node = 0
    for byte in data:
        index = (node << 8) | byte
        out += emitted[index]
        node = next_node[index]
    if node == EOS_SEEN:
        raise MalformedInput(RULE_EOS, "7541#5.2")
    if not _MAY_END[node]:
        if _is_all_ones_path(node):
            raise MalformedInput(RULE_PADDING_TOO_LONG, "7541#5.2")
        raise MalformedInput(RULE_PADDING_NOT_EOS, "7541#5.2")
    return bytes(out)


def _is_all_ones_path(target: int) -> bool:
    """Whether ``target`` lies on the all-ones path from the root (the EOS prefix)."""
    children = _TREE
    node = 0
    while node >= 0:
        if node == target:
            return True
        node = children[node][1]
    return False
