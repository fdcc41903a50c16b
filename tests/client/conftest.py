"""The Python client (client/) is its own distribution: its tests import it from its
folder, as `pip install ./client` would install it."""

import sys
from pathlib import Path

CLIENT = Path(__file__).resolve().parents[2] / "client"
if str(CLIENT) not in sys.path:
    sys.path.insert(0, str(CLIENT))
