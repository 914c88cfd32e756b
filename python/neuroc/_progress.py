"""Progress of long C calls: the library's nc_progress_fn, forwarded to a
callable(what, done, total), to tqdm bars when tqdm is installed, or nowhere."""
import sys

from . import _lib


class Progress:
    """progress: None = tqdm when installed, False = silent, or a callable.
    Use as a context manager around the call; .fn goes into the options."""

    def __init__(self, progress=None):
        self.user = None
        self.bars = {}
        self.error = None
        if callable(progress):
            self.user = progress
        elif progress is None:
            try:
                import tqdm  # optional
                self.tqdm = tqdm.tqdm
                self.user = self._bar
            except ImportError:
                pass
        self.fn = _lib.PROGRESS_FN(self._call) if self.user else _lib.PROGRESS_FN()

    def _call(self, what, done, total, _user):
        # runs on the calling thread, inside the C call: ctypes has taken the GIL back
        try:
            self.user(what.decode() if what else "", int(done), int(total))
        except BaseException as e:  # an exception cannot cross C; raised once the call returns
            self.error = self.error or e

    def _bar(self, what, done, total):
        bar = self.bars.get(what)
        if bar is None:
            bar = self.bars[what] = self.tqdm(total=total, desc=what, leave=False, file=sys.stderr)
        bar.total = total
        bar.update(done - bar.n)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        for bar in self.bars.values():
            bar.close()
        self.bars.clear()
        if self.error is not None and exc[0] is None:
            raise self.error
        return False
