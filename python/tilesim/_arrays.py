"""Arrays in and out: torch tensors and numpy arrays (anything numpy.asarray takes), converted to the
C-contiguous int64 / float32 numpy arrays the native module reads, without a copy when they already
are (a CPU torch tensor shares its memory with the numpy view)."""
import numpy as np

from ._errors import InputError


def is_torch(value):
    return type(value).__module__.startswith("torch")


def to_numpy(value, dtype, what):
    """`value` as a C-contiguous numpy array of `dtype` (np.int64 or np.float32)."""
    if is_torch(value):
        if value.device.type != "cpu":
            value = value.detach().cpu()
        value = value.detach().numpy()
    try:
        array = np.asarray(value)
    except Exception as e:  # noqa: BLE001 - any conversion failure is the caller's input
        raise InputError(f"{what}: expected an array (torch tensor or numpy array), found {type(value).__name__} ({e})") from None
    if dtype == np.int64 and array.dtype.kind not in "iu":
        raise InputError(f"{what}: expected an integer array, found dtype {array.dtype}")
    if dtype == np.float32 and array.dtype.kind not in "fiu":
        raise InputError(f"{what}: expected a floating-point array, found dtype {array.dtype}")
    return np.ascontiguousarray(array, dtype=dtype)


def like_input(array, torch_out):
    """An output array as the caller's kind: a torch tensor (sharing memory) when inputs were tensors."""
    if torch_out:
        import torch
        return torch.from_numpy(array)
    return array
