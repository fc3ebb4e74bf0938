"""TensorFlow checkpoint (V2, "TensorBundle") bytes, written from
TensorFlow's sources without TensorFlow: tensorflow/core/util/tensor_bundle
(tensor_bundle.cc: BundleWriter, naming.cc: the shard names,
tensor_bundle.proto: BundleHeaderProto, BundleEntryProto) and the table
code of third_party/xla/xla/tsl/lib/io (table_builder.cc, block_builder.cc,
format.cc: blocks of prefix-compressed keys with a restart every 16
entries, a block cut once it passes block_size, snappy compression kept
when it saves an eighth, a 5-byte trailer of type and masked CRC-32C, an
index block of shortest separators, an empty metaindex, a 48-byte footer).
Snappy and CRC-32C are written here too, so the C reader (libsnappy, its
own CRC) is checked against an independent implementation."""
import struct

TABLE_MAGIC = 0xdb4775248b80fb57
DT = {"float32": 1, "float64": 2, "int32": 3, "int64": 9, "bfloat16": 14, "float16": 19}


def _crc_table():
    t = []
    for i in range(256):
        c = i
        for _ in range(8):
            c = (c >> 1) ^ 0x82F63B78 if c & 1 else c >> 1
        t.append(c)
    return t


_CRC = _crc_table()


def crc32c(data, crc=0):
    crc ^= 0xFFFFFFFF
    for b in data:
        crc = _CRC[(crc ^ b) & 0xFF] ^ (crc >> 8)
    return crc ^ 0xFFFFFFFF


def mask(crc):
    return (((crc >> 15) | (crc << 17)) + 0xa282ead8) & 0xFFFFFFFF


def varint(v):
    out = bytearray()
    v &= (1 << 64) - 1  # negative int32/int64 values as protobuf writes them: 10 bytes
    while True:
        b = v & 0x7F
        v >>= 7
        if v:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def snappy_compress(data):
    """Greedy snappy: literals and 2-byte-offset copies of 4..64 bytes."""
    out = bytearray(varint(len(data)))
    table, i, lit = {}, 0, 0

    def literal(a, b):
        n = b - a
        if n == 0:
            return
        if n <= 60:
            out.append((n - 1) << 2)
        else:
            k = (n - 1).bit_length() + 7 >> 3
            out.append((59 + k) << 2)
            out.extend((n - 1).to_bytes(k, "little"))
        out.extend(data[a:b])

    while i + 4 <= len(data):
        key = bytes(data[i:i + 4])
        j = table.get(key)
        table[key] = i
        if j is not None and i - j < 65536:
            n = 4
            while i + n < len(data) and n < 64 and data[j + n] == data[i + n]:
                n += 1
            literal(lit, i)
            out.append(((n - 1) << 2) | 2)
            out.extend((i - j).to_bytes(2, "little"))
            i += n
            lit = i
        else:
            i += 1
    literal(lit, len(data))
    return bytes(out)


class Block:
    """block_builder.cc: shared/unshared/value lengths, restarts every 16."""

    def __init__(self, interval=16):
        self.buf, self.restarts, self.count, self.last, self.interval = bytearray(), [0], 0, b"", interval

    def add(self, key, value):
        shared = 0
        if self.count < self.interval:
            while shared < min(len(key), len(self.last)) and key[shared] == self.last[shared]:
                shared += 1
        else:
            self.restarts.append(len(self.buf))
            self.count = 0
        self.buf += varint(shared) + varint(len(key) - shared) + varint(len(value)) + key[shared:] + value
        self.last, self.count = key, self.count + 1

    def size(self):
        return len(self.buf) + 4 * len(self.restarts) + 4

    def finish(self):
        return bytes(self.buf) + b"".join(struct.pack("<I", r) for r in self.restarts) + struct.pack("<I", len(self.restarts))


def shortest_separator(a, b):
    """The bytewise comparator's FindShortestSeparator."""
    n = 0
    while n < min(len(a), len(b)) and a[n] == b[n]:
        n += 1
    if n < min(len(a), len(b)) and a[n] < 0xFF and a[n] + 1 < b[n]:
        return a[:n] + bytes([a[n] + 1])
    return a


def short_successor(a):
    for i, c in enumerate(a):
        if c != 0xFF:
            return a[:i] + bytes([c + 1])
    return a


def write_table(entries, block_size=4096, compress=True, stats=None, mutate=None):
    """table_builder.cc for sorted (key, value) pairs; stats (a dict) gets
    the count of blocks written and of those snappy kept; mutate (tests of
    damaged files) may change a block's contents before its trailer."""
    out = bytearray()
    stats = {} if stats is None else stats

    def write_block(raw):
        raw = mutate(raw) if mutate else raw
        kind = 0
        if compress:
            c = snappy_compress(raw)
            if len(c) < len(raw) - len(raw) // 8:
                raw, kind = c, 1
        stats["blocks"] = stats.get("blocks", 0) + 1
        stats["snappy"] = stats.get("snappy", 0) + kind
        handle = varint(len(out)) + varint(len(raw))
        out.extend(raw)
        out.append(kind)
        out.extend(struct.pack("<I", mask(crc32c(raw + bytes([kind])))))
        return handle

    index, block, pending, last = Block(1), Block(), None, b""
    for key, value in entries:
        if pending is not None:
            index.add(shortest_separator(last, key), pending)
            pending = None
        block.add(key, value)
        last = key
        if block.size() >= block_size:
            pending = write_block(block.finish())
            block = Block()
    if block.count or len(block.restarts) > 1:
        pending = write_block(block.finish())
    if pending is not None:
        index.add(short_successor(last), pending)
    meta = write_block(Block().finish())
    idx = write_block(index.finish())
    footer = (meta + idx).ljust(40, b"\0") + struct.pack("<Q", TABLE_MAGIC)
    return bytes(out) + footer


def field_varint(num, v):
    return varint(num << 3) + varint(v)


def field_bytes(num, b):
    return varint(num << 3 | 2) + varint(len(b)) + b


def entry_proto(dtype, shape, shard, offset, size, crc):
    dims = b"".join(field_bytes(2, field_varint(1, d)) for d in shape)
    msg = field_varint(1, DT[dtype]) + field_bytes(2, dims)
    if shard:
        msg += field_varint(3, shard)
    if offset:
        msg += field_varint(4, offset)
    msg += field_varint(5, size) + varint(6 << 3 | 5) + struct.pack("<I", mask(crc))
    return msg


def header_proto(num_shards):
    version = field_varint(1, 1)  # VersionDef: producer 1
    return field_varint(1, num_shards) + field_bytes(3, version)


def write_bundle(prefix, tensors, num_shards=1, block_size=4096, compress=True, stats=None, entry_hook=None,
                 mutate=None, order=None):
    """tensors: {name: numpy array, or ("bfloat16", uint16 array)}. Tensors
    go to shards in turn, each shard's in name order (BundleWriter appends
    in the order of Add). entry_hook(name, proto) may change an entry's
    proto, order(names) the sorted names' order (tests of hostile files).
    A name may be bytes (a key no str spells, as a slice's)."""
    def key(name):
        return name if isinstance(name, bytes) else name.encode()

    names = sorted(tensors, key=key)
    names = order(names) if order else names
    shards = [bytearray() for _ in range(num_shards)]
    entries = [(b"", header_proto(num_shards))]
    for k, name in enumerate(names):
        a = tensors[name]
        dtype, a = a if isinstance(a, tuple) else (str(a.dtype), a)
        s = k % num_shards
        raw = a.tobytes()
        proto = entry_proto(dtype, a.shape, s, len(shards[s]), len(raw), crc32c(raw))
        entries.append((key(name), entry_hook(name, proto) if entry_hook else proto))
        shards[s] += raw
    with open(prefix + ".index", "wb") as f:
        f.write(write_table(entries, block_size, compress, stats, mutate))
    for s in range(num_shards):
        with open("%s.data-%05d-of-%05d" % (prefix, s, num_shards), "wb") as f:
            f.write(bytes(shards[s]))
