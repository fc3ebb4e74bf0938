"""Devices and contexts: a context is one Vulkan device that models load onto.

Models share one context per device (``Context.shared``): each context
opens the device anew and compiles its own kernels, so a process opens as
few as it can. Opening and closing contexts may overlap any other call
(docs/api.md, "Thread safety").
"""
from __future__ import annotations

import ctypes
import threading
import weakref
from dataclasses import dataclass
from typing import List, Optional, Union

from . import _capi
from ._handle import Closable, Handle

Device = Union[None, int, str]

_DEVICE_TYPES = {0: "other", 1: "integrated", 2: "discrete", 3: "virtual", 4: "cpu"}


@dataclass(frozen=True)
class DeviceInfo:
    """A Vulkan device as the library sees it."""
    index: int
    name: str
    type: str                 # "discrete", "integrated", "virtual", "cpu" or "other"
    vendor_id: int
    device_id: int
    api_version: str          # "1.3.255"
    device_local_bytes: int   # the largest device-local heap
    subgroup_size: int
    supported: bool           # meets txlm's requirements
    preferred: bool           # the one a context picks by default


def _device_info(index: int, d: _capi.DeviceInfo) -> DeviceInfo:
    v = d.api_version
    return DeviceInfo(index, d.name.decode("utf-8", "replace"), _DEVICE_TYPES.get(d.type, "other"), d.vendor_id,
                      d.device_id, f"{v >> 22 & 0x7F}.{v >> 12 & 0x3FF}.{v & 0xFFF}", d.device_local_bytes,
                      d.subgroup_size, bool(d.supported), bool(d.preferred))


def devices() -> List[DeviceInfo]:
    """The Vulkan devices (``txlm devices``); callable at any time, contexts open or not."""
    return _list_devices()


def _list_devices() -> List[DeviceInfo]:
    lib = _capi.lib()
    count = ctypes.c_uint32()
    _capi.check(lib.txlm_list_devices(None, 0, ctypes.byref(count)), "listing devices")
    infos = (_capi.DeviceInfo * max(count.value, 1))()
    _capi.check(lib.txlm_list_devices(infos, count.value, ctypes.byref(count)), "listing devices")
    return [_device_info(i, infos[i]) for i in range(min(count.value, len(infos)))]


class Context(Closable):
    """A Vulkan device opened for txlm.

    device: an index or a substring of the device's name; None takes
    ``$TXLM_DEVICE``, then the preferred device (discrete > integrated >
    virtual > CPU). validation: the Khronos validation layer (None:
    ``$TXLM_VALIDATION``). memory_budget: a cap on device memory in bytes (0: none).
    """

    _shared: "weakref.WeakValueDictionary[tuple, Context]" = weakref.WeakValueDictionary()
    _shared_lock = threading.Lock()

    def __init__(self, device: Device = None, *, validation: Optional[bool] = None, memory_budget: int = 0):
        opts = _capi.ContextOptions()
        opts.device = None if device is None else str(device).encode("utf-8")
        opts.validation = int(bool(validation))
        opts.memory_budget = int(memory_budget)
        lib = _capi.lib()
        self._h = Handle.make(self, "context", lib.txlm_context_destroy, lambda _: _capi.made(
            lib.txlm_context_create, "opening the device", ctypes.byref(opts)))
        self.requested = device

    @classmethod
    def shared(cls, device: Device = None) -> "Context":
        """The context of a device that every model opened with the same ``device`` shares."""
        key = (None if device is None else str(device),)
        with cls._shared_lock:
            ctx = cls._shared.get(key)
            if ctx is None or ctx.closed:
                ctx = cls(device)
                cls._shared[key] = ctx
            return ctx

    @property
    def device(self) -> DeviceInfo:
        """The device this context runs on."""
        info = _capi.DeviceInfo()
        with self._h.use() as ptr:
            _capi.check(_capi.lib().txlm_context_device(ptr, ctypes.byref(info)), "reading the device")
        return _device_info(-1, info)

    @property
    def validation_messages(self) -> int:
        """Messages the validation layer printed so far (0 without validation)."""
        with self._h.use() as ptr:
            return int(_capi.lib().txlm_context_validation_messages(ptr))

    def __repr__(self) -> str:
        return "<txlm.Context closed>" if self.closed else f"<txlm.Context {self.device.name!r}>"
