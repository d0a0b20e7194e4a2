"""Training on the arena's rules: a PettingZoo AEC environment (the four seats), a Gymnasium
environment (one seat against three SDK bots), and the numeric form of an observation they
share. docs/TRAINING.md is the guide.

It needs the ``train`` extra (``pip install '.[train]'``: numpy, Gymnasium, PettingZoo), which
the arena never does. Importing it registers the Gymnasium environment as
``gongzhu/GongZhu-v0``:

>>> import gymnasium
>>> env = gymnasium.make("gongzhu/GongZhu-v0", opponents=("easy", "easy", "easy"))
>>> observation, info = env.reset(seed=1)
>>> observation["observation"].shape, info["seat"]
((1105,), 0)
"""

try:
    import gymnasium
    import numpy  # noqa: F401
    import pettingzoo  # noqa: F401
except ImportError as missing:  # pragma: no cover - the SDK without its extra
    raise ImportError(
        f"the training environment needs the train extra ({missing.name} is not installed): "
        "pip install '.[train]' in a clone of the arena's repository"
    ) from missing

from training.encoding import ACTIONS, DONE, LAYOUT, SIZE, History, actions_of, encode
from training.gymnasium_env import GongZhuEnv
from training.pettingzoo_env import AGENTS, GongZhuAECEnv
from training.table import IllegalActionError, Reward, Table

gymnasium.register(id="gongzhu/GongZhu-v0", entry_point="training.gymnasium_env:GongZhuEnv")

__all__ = [
    "ACTIONS", "AGENTS", "DONE", "LAYOUT", "SIZE", "GongZhuAECEnv", "GongZhuEnv", "History",
    "IllegalActionError", "Reward", "Table", "actions_of", "encode",
]  # fmt: skip
