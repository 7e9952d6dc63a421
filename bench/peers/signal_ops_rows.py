"""The Python sides of signal-ops rows kept beside their TypeScript module in bench/signal-ops/rows/
(a row's peers in one file of their own: iq_spectrogram_peers.py). Loaded by path: the folder is
not a package and its parent's name has a hyphen.
"""
import importlib.util
import os

ROWS_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "signal-ops", "rows")
_loaded = {}


def row_peers(name):
    """The module bench/signal-ops/rows/<name>.py, loaded once."""
    if name not in _loaded:
        spec = importlib.util.spec_from_file_location(f"signal_ops_rows_{name}", os.path.join(ROWS_DIR, f"{name}.py"))
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        _loaded[name] = module
    return _loaded[name]
