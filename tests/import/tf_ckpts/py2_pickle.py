"""Protocol-2 pickles as Python 2's pickle module writes the authors'
cached corpus (tf/data_utils.py: pickle.dump(corpus, fp, protocol=2)):
instances of new-style classes by NEWOBJ and BUILD, byte strings
(Python 2 str) as SHORT_BINSTRING/BINSTRING, every object memoised
(BINPUT, LONG_BINPUT) and referenced again by BINGET, OrderedDict and
Counter by their Python 2 __reduce__ (a list of [key, value] pairs, a
dict), NumPy arrays by numpy.core.multiarray._reconstruct and a BUILD
state holding the raw bytes."""
import struct


class Obj:
    def __init__(self, module, name, attrs):
        self.module, self.name, self.attrs = module, name, attrs


class OrderedDict2(list):
    """Items [[k, v], ...] of a Python 2 OrderedDict."""


class Counter2(dict):
    pass


class Array:
    def __init__(self, values):
        self.values = values  # numpy int64 array


class Writer:
    def __init__(self):
        self.out = bytearray(b"\x80\x02")
        self.memo = {}

    def put(self):
        n = len(self.memo)
        self.out += b"q" + bytes([n]) if n < 256 else b"r" + struct.pack("<I", n)
        return n

    def ref(self, key):
        n = self.memo.get(key)
        if n is None:
            return False
        self.out += b"h" + bytes([n]) if n < 256 else b"j" + struct.pack("<I", n)
        return True

    def glob(self, module, name):
        if self.ref(("g", module, name)):
            return
        self.out += b"c" + module.encode() + b"\n" + name.encode() + b"\n"
        self.memo[("g", module, name)] = self.put()

    def string(self, s):
        b = s.encode("utf-8") if isinstance(s, str) else s
        if self.ref(("s", b)):
            return
        self.out += (b"U" + bytes([len(b)]) if len(b) < 256 else b"T" + struct.pack("<I", len(b))) + b
        self.memo[("s", b)] = self.put()

    def dump(self, v):
        o = self.out
        if v is None:
            o += b"N"
        elif v is True or v is False:
            o += b"\x88" if v else b"\x89"
        elif isinstance(v, int):
            o += b"K" + bytes([v]) if 0 <= v < 256 else b"J" + struct.pack("<i", v)
        elif isinstance(v, (str, bytes)):
            self.string(v)
        elif isinstance(v, OrderedDict2):
            self.glob("collections", "OrderedDict")
            o += b"("
            self.dump([list(kv) for kv in v])
            o += b"tR"
            self.put()
        elif isinstance(v, Counter2):
            self.glob("collections", "Counter")
            o += b"("
            self.dump(dict(v))
            o += b"tR"
            self.put()
        elif isinstance(v, list):
            o += b"]"
            self.put()
            if v:
                o += b"("
                for x in v:
                    self.dump(x)
                o += b"e"
        elif isinstance(v, tuple):
            o += b"("
            for x in v:
                self.dump(x)
            o += b"t"
            self.put()
        elif isinstance(v, dict):
            o += b"}"
            self.put()
            if v:
                o += b"("
                for k, x in v.items():
                    self.dump(k)
                    self.dump(x)
                o += b"u"
        elif isinstance(v, Array):
            self.array(v.values)
        elif isinstance(v, Obj):
            self.glob(v.module, v.name)
            o += b")\x81"
            self.put()
            self.dump(v.attrs)
            o += b"b"
        else:
            raise TypeError(type(v))

    def array(self, a):
        o = self.out
        self.glob("numpy.core.multiarray", "_reconstruct")
        self.glob("numpy", "ndarray")
        o += b"K\x00\x85"
        self.string(b"b")
        o += b"\x87R"
        self.put()
        o += b"(K\x01"
        o += b"J" + struct.pack("<i", len(a)) + b"\x85"
        self.put()
        self.glob("numpy", "dtype")
        self.string(b"i8")
        o += b"K\x00K\x01\x87R"
        self.put()
        o += b"(K\x03"
        self.string(b"<")
        o += b"NNNJ\xff\xff\xff\xffJ\xff\xff\xff\xffK\x00t"
        self.put()
        o += b"b\x89"
        raw = a.astype("<i8").tobytes()
        o += b"T" + struct.pack("<I", len(raw)) + raw
        o += b"t"
        self.put()
        o += b"b"


def dumps(v):
    w = Writer()
    w.dump(v)
    w.out += b"."
    return bytes(w.out)
