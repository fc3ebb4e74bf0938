"""The C API of include/txlm.h through ctypes: its structures, the prototype
of every function used, and ``check`` turning a status into an exception.

The structures mirror the header field for field; ``lib()`` opens the
library once and declares every prototype, so a call with a wrong argument
type fails in ctypes instead of reaching C.
"""
from __future__ import annotations

import ctypes
import threading
from ctypes import (CFUNCTYPE, POINTER, Structure, c_char, c_char_p, c_double, c_float, c_int, c_int32, c_size_t,
                    c_uint32, c_uint64, c_void_p)
from typing import Callable, Optional

from . import _loader
from .errors import TxlmError, error_for

p_int32 = POINTER(c_int32)
p_float = POINTER(c_float)

PROGRESS_FN = CFUNCTYPE(c_int, c_void_p, c_double)


class DeviceInfo(Structure):
    _fields_ = [("name", c_char * 256), ("type", c_int), ("vendor_id", c_uint32), ("device_id", c_uint32),
                ("api_version", c_uint32), ("device_local_bytes", c_uint64), ("subgroup_size", c_uint32),
                ("supported", c_int), ("preferred", c_int)]


class ContextOptions(Structure):
    _fields_ = [("device", c_char_p), ("validation", c_int), ("memory_budget", c_uint64),
                ("max_submit_dispatches", c_uint32), ("low_priority", c_int)]


class ModelOptions(Structure):
    _fields_ = [("no_verify", c_int), ("progress", PROGRESS_FN), ("progress_user", c_void_p)]


class ModelParams(Structure):
    _fields_ = [(n, c_uint32) for n in ("n_token", "d_model", "d_embed", "n_head", "d_head", "d_inner", "n_layer",
                                         "div_val", "n_clusters")] + \
               [("clamp_len", c_int32), ("mem_len", c_uint32), ("tgt_len", c_uint32), ("pre_lnorm", c_int),
                ("same_length", c_int), ("tokenizer", c_int), ("eos_id", c_int32), ("unk_id", c_int32)]


class MemoryUse(Structure):
    _fields_ = [("device_bytes", c_uint64), ("host_bytes", c_uint64)]


class Span(Structure):
    _fields_ = [("begin", c_size_t), ("end", c_size_t)]


class TokenSpans(Structure):
    _fields_ = [("n", c_size_t), ("ids", p_int32), ("spans", POINTER(Span)), ("word", POINTER(c_size_t)),
                ("n_words", c_size_t), ("words", POINTER(Span)), ("guessed", c_size_t)]


class SessionOptions(Structure):
    _fields_ = [("mem_len", c_uint32), ("clamp_len", c_int32), ("same_length", c_int), ("max_segment", c_uint32),
                ("zero_memory", c_int)]


class AttentionShape(Structure):
    _fields_ = [(n, c_uint32) for n in ("n_layer", "n_head", "qlen", "mlen", "klen")]


class Sampling(Structure):
    _fields_ = [("temperature", c_float), ("top_k", c_uint32), ("top_p", c_float)]


class RepeatPenalty(Structure):
    _fields_ = [("penalty", c_float), ("tokens", p_int32), ("n", c_uint32)]


class BatchSizes(Structure):
    _fields_ = [(n, c_uint64) for n in ("stream_ring_bytes", "stream_scratch_bytes", "batch_bytes", "total_bytes",
                                         "available_bytes")]


class StreamFeed(Structure):
    _fields_ = [("session", c_void_p), ("tokens", p_int32), ("n", c_uint32), ("first_row", c_uint32),
                ("logprobs", p_float), ("targets", p_int32), ("target_logprobs", p_float)]


S = c_int  # txlm_status
CANCELLED = 11
VP = c_void_p
PVP = POINTER(c_void_p)
P_SIZE = POINTER(c_size_t)
P_CHARP = POINTER(c_char_p)

# name: (restype, argtypes)
_PROTOTYPES = {
    "txlm_status_string": (c_char_p, [c_int]),
    "txlm_last_error": (c_char_p, []),
    "txlm_version": (c_char_p, []),
    "txlm_version_number": (c_uint32, []),
    "txlm_list_devices": (S, [POINTER(DeviceInfo), c_uint32, POINTER(c_uint32)]),
    "txlm_context_create": (S, [POINTER(ContextOptions), PVP]),
    "txlm_context_destroy": (None, [VP]),
    "txlm_context_device": (S, [VP, POINTER(DeviceInfo)]),
    "txlm_context_validation_messages": (c_uint64, [VP]),
    "txlm_model_load": (S, [VP, c_char_p, POINTER(ModelOptions), PVP]),
    "txlm_model_free": (None, [VP]),
    "txlm_model_get_params": (None, [VP, POINTER(ModelParams)]),
    "txlm_model_step_bytes": (c_uint64, [VP]),
    "txlm_model_memory": (S, [VP, POINTER(MemoryUse)]),
    "txlm_session_memory": (S, [VP, POINTER(MemoryUse)]),
    "txlm_tokenize": (S, [VP, c_char_p, c_size_t, POINTER(p_int32), P_SIZE]),
    "txlm_detokenize": (S, [VP, p_int32, c_size_t, POINTER(c_void_p)]),
    "txlm_token_symbol": (c_void_p, [VP, c_int32, P_SIZE]),
    "txlm_token_id": (S, [VP, c_char_p, c_size_t, POINTER(c_int32)]),
    "txlm_vocab_size": (c_uint32, [VP]),
    "txlm_free": (None, [c_void_p]),
    "txlm_tokenize_spans": (S, [VP, c_char_p, c_size_t, POINTER(TokenSpans)]),
    "txlm_token_spans_free": (None, [POINTER(TokenSpans)]),
    "txlm_detokenizer_create": (S, [VP, PVP]),
    "txlm_detokenizer_push": (S, [VP, c_int32, POINTER(c_void_p), P_SIZE]),
    "txlm_detokenizer_flush": (S, [VP, POINTER(c_void_p), P_SIZE]),
    "txlm_detokenizer_reset": (None, [VP]),
    "txlm_detokenizer_free": (None, [VP]),
    "txlm_session_create": (S, [VP, POINTER(SessionOptions), PVP]),
    "txlm_session_free": (None, [VP]),
    "txlm_session_reset": (None, [VP]),
    "txlm_session_memory_len": (c_uint32, [VP]),
    "txlm_session_feed": (S, [VP, p_int32, c_uint32, p_float]),
    "txlm_session_feed_rows": (S, [VP, p_int32, c_uint32, c_uint32, p_float]),
    "txlm_session_score": (S, [VP, p_int32, p_int32, c_uint32, p_float]),
    "txlm_session_feed_long": (S, [VP, p_int32, c_size_t, PROGRESS_FN, c_void_p, P_SIZE]),
    "txlm_session_feed_text": (S, [VP, c_char_p, c_size_t, PROGRESS_FN, c_void_p, P_SIZE]),
    "txlm_session_score_long": (S, [VP, p_int32, p_int32, c_size_t, p_float, PROGRESS_FN, c_void_p, P_SIZE]),
    "txlm_session_state_size": (c_size_t, [VP]),
    "txlm_session_save": (S, [VP, c_void_p, c_size_t, P_SIZE]),
    "txlm_session_restore": (S, [VP, c_void_p, c_size_t]),
    "txlm_session_save_file": (S, [VP, c_char_p]),
    "txlm_session_restore_file": (S, [VP, c_char_p]),
    "txlm_session_capture_attention": (S, [VP, c_int]),
    "txlm_session_attention": (S, [VP, c_uint32, p_float, p_float, POINTER(AttentionShape)]),
    "txlm_session_set_seed": (None, [VP, c_uint64]),
    "txlm_session_sample_penalized": (S, [VP, POINTER(Sampling), POINTER(RepeatPenalty), POINTER(c_int32)]),
    "txlm_session_generate": (S, [VP, POINTER(Sampling), POINTER(RepeatPenalty), c_size_t, p_int32, PROGRESS_FN,
                                  c_void_p, P_SIZE]),
    "txlm_session_next_logprobs": (S, [VP, p_float]),
    "txlm_session_next_top_k": (S, [VP, c_uint32, p_int32, p_float]),
    "txlm_batch_plan": (S, [VP, c_uint32, POINTER(SessionOptions), POINTER(BatchSizes)]),
    "txlm_batch_create": (S, [VP, c_uint32, POINTER(SessionOptions), PVP]),
    "txlm_batch_free": (None, [VP]),
    "txlm_batch_memory": (S, [VP, POINTER(MemoryUse)]),
    "txlm_batch_feed": (S, [VP, POINTER(StreamFeed), c_uint32]),
    "txlm_batch_sample": (S, [VP, POINTER(c_void_p), c_uint32, POINTER(Sampling), POINTER(POINTER(RepeatPenalty)),
                              p_int32]),
    "txlm_stopper_create": (S, [P_CHARP, c_size_t, PVP]),
    "txlm_stopper_push": (S, [VP, c_char_p, c_size_t, POINTER(c_void_p), P_SIZE, POINTER(c_int)]),
    "txlm_stopper_flush": (S, [VP, POINTER(c_void_p), P_SIZE]),
    "txlm_stopper_free": (None, [VP]),
}

# The oldest library whose structures match these (txlm_version_number).
MIN_VERSION = 100

_lib: Optional[ctypes.CDLL] = None
_lock = threading.Lock()


def lib() -> ctypes.CDLL:
    """The library, opened and declared on first use."""
    global _lib
    if _lib is not None:
        return _lib
    with _lock:
        if _lib is None:
            handle = _loader.open_library()
            for name, (restype, argtypes) in _PROTOTYPES.items():
                fn = getattr(handle, name)
                fn.restype, fn.argtypes = restype, argtypes
            if handle.txlm_version_number() < MIN_VERSION:
                raise TxlmError(f"libtxlm {handle.txlm_version().decode()} is older than this package needs (0.1.0)")
            _lib = handle
    return _lib


def last_error() -> str:
    return (lib().txlm_last_error() or b"").decode("utf-8", "replace")


def check(status: int, what: str = "") -> None:
    """Raises the exception of a failed status with the library's message (prefixed by what)."""
    if status:
        msg = last_error()
        # the library's message may already name the call ("sampling: top_k ...")
        said = bool(what and msg) and not msg.startswith(what + ":")
        raise error_for(status, f"{what}: {msg}" if said else (msg or what))


def made(fn: Callable[..., int], what: str, *args: object) -> int:
    """The pointer a C constructor, ``fn(*args, &out)``, returns in out (its failure raised)."""
    out = c_void_p()
    check(fn(*args, ctypes.byref(out)), what)
    return out.value


def bytes_at(ptr: Optional[int], length: int) -> bytes:
    """length bytes at a C pointer (b"" for NULL)."""
    return ctypes.string_at(ptr, length) if ptr and length else b""
