"""What the Python API accepts as data and models, turned into what the C
library takes: float32 arrays of the model's input shape, int64 labels,
ONNX bytes. Conventions follow the neuroc program's (cli/data_opts.c)."""
import io

import numpy as np

from ._errors import InvalidArgument
from ._tensor import is_torch_tensor, to_numpy_input


def is_torch_module(obj):
    return any(c.__module__.startswith("torch.nn") and c.__name__ == "Module" for c in type(obj).__mro__)


def features(x, sample_shape=None, scale=True):
    """float32 samples (N, *sample_shape): uint8 scaled by 1/255 unless scale
    is False (as torchvision's ToTensor and `neuroc ... --no-scale`), other
    types converted; reshaped to the sample shape when the number of values
    per sample agrees ([N,28,28] -> [N,1,28,28]), as the program does."""
    x = to_numpy_input(x)
    if x.dtype == np.uint8:
        x = x.astype(np.float32)
        if scale:
            x *= np.float32(1.0) / np.float32(255.0)  # the float32 factor the program uses
    elif x.dtype != np.float32:
        x = x.astype(np.float32)
    if sample_shape is not None and all(d >= 0 for d in sample_shape) and x.ndim >= 1 and x.shape[0] > 0:
        per = int(np.prod(sample_shape, dtype=np.int64))
        if x.size == x.shape[0] * per and tuple(x.shape[1:]) != tuple(sample_shape):
            x = x.reshape((x.shape[0],) + tuple(sample_shape))
    return x


def labels(y, n=None):
    y = to_numpy_input(y)
    if y.dtype.kind not in "iu":
        raise InvalidArgument(f"labels must be integers, not {y.dtype}")
    y = np.ascontiguousarray(y.reshape(-1), dtype=np.int64)
    if n is not None and y.shape[0] != n:
        raise InvalidArgument(f"{y.shape[0]} labels for {n} samples")
    return y


def gather(data, limit=None):
    """An array, a tensor, or an iterable of batches (a DataLoader: each batch
    x or (x, y, ...)) as (x, y): batches concatenated until `limit` rows.
    y is None when the batches carry no labels."""
    if isinstance(data, (np.ndarray, list)) or is_torch_tensor(data):
        return to_numpy_input(data), None
    xs, ys, n = [], [], 0
    for batch in data:
        if isinstance(batch, (tuple, list)):
            xs.append(to_numpy_input(batch[0]))
            if len(batch) > 1:
                ys.append(to_numpy_input(batch[1]))
        else:
            xs.append(to_numpy_input(batch))
        n += xs[-1].shape[0]
        if limit and n >= limit:
            break
    if not xs:
        raise InvalidArgument("the data iterable gave no batches")
    x = np.concatenate(xs)[:limit] if limit else np.concatenate(xs)
    y = (np.concatenate(ys)[:limit] if limit else np.concatenate(ys)) if len(ys) == len(xs) else None
    return x, y


def export_onnx(module, sample, opset=13):
    """A torch.nn.Module as ONNX bytes, exported in eval mode in memory with
    `sample` (one or more input rows) and a free batch dimension."""
    import torch  # only here: torch is optional

    sample = torch.as_tensor(np.ascontiguousarray(to_numpy_input(sample)))
    try:
        p = next(module.parameters())
        sample = sample.to(device=p.device, dtype=p.dtype)
    except StopIteration:
        pass
    was_training = module.training
    module.eval()
    buf = io.BytesIO()
    try:
        # not under torch.no_grad(): there torch 1.13's nn.MultiheadAttention takes its fused
        # path (aten::_native_multi_head_attention), which has no ONNX export (a ViT fails)
        torch.onnx.export(module, (sample,), buf, input_names=["input"], output_names=["output"],
                          dynamic_axes={"input": {0: "N"}, "output": {0: "N"}}, opset_version=opset)
    finally:
        module.train(was_training)
    return buf.getvalue()
