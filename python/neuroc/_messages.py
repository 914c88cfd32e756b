"""The library's messages name the neuroc program's options (`use --backend
cpu or cpu-fast`, `--calib`); raised or logged in Python they name the
arguments that mean the same (`backend='cpu'`, `calib=`), so that a message
says what to change in the call that failed."""
import re

# program option -> Python argument, where the name differs; an option not
# listed here is its name with '_' for '-' (convert's options all are).
_ARGS = {"-T": "timesteps", "--nir-reset": "reset", "--nir-spike": "spike", "--mode": "reset",
         "--nir-strict": "strict", "--cuda-strategy": "cuda_strategy"}
# options that stand for an argument and its value together
_FLAGS = {"--plain-spikes": "spikes='plain'", "--signed-spikes": "spikes='signed'", "--nir-strict": "strict=True"}
# options with no Python argument: named as the program's, said so
_PROGRAM_ONLY = {"--max-tensor-size"}

_OPTION = re.compile(r"(?<![\w-])(-T|--[a-z][a-z0-9-]*)(?: ([A-Za-z0-9_.][\w.-]*(?: or [A-Za-z0-9_.][\w.-]*)*))?")


def _one(m):
    flag, value = m.group(1), m.group(2)
    if flag in _PROGRAM_ONLY:
        return m.group(0)
    if flag in _FLAGS:
        return _FLAGS[flag] + (" " + value if value else "")
    name = _ARGS.get(flag, flag.lstrip("-").replace("-", "_"))
    if not value:
        return name + "="
    words = value.split(" or ")
    quoted = [w if re.fullmatch(r"-?[0-9.]+(e-?[0-9]+)?", w) else repr(w) for w in words]
    return " or ".join(f"{name}={q}" for q in quoted)


# two arguments in a row ("--nir-reset subtract --nir-spike ge") read as a call's: comma-separated
_ADJACENT = re.compile(r"(\b\w+=(?:'[^']*'|[\w.-]+)) (?=\w+=)")


def pythonic(message):
    """message with the program's options written as Python arguments."""
    return _ADJACENT.sub(r"\1, ", _OPTION.sub(_one, message))
