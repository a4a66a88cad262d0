"""The command line every example shares: pyasc's ``-r BACKEND -v PLATFORM`` convention.

``-r`` must name a ``config.Backend`` member (``Model`` is what ascsim simulates; ``NPU`` says what
a real device run would need), ``-v`` a ``config.Platform`` value such as ``Ascend910B1``.
"""

import argparse

import asc.runtime.config as config


def platform_from_cli(doc: str, argv=None):
    """Parse ``-r``/``-v``; returns the chosen ``config.Platform`` or None (the default SoC)."""
    parser = argparse.ArgumentParser(description=doc.strip().splitlines()[0])
    parser.add_argument("-r", type=str, default="Model", help="backend to run")
    parser.add_argument("-v", type=str, default=None, help="platform to run")
    args = parser.parse_args(argv)
    if args.r not in config.Backend.__members__:
        raise ValueError(f"Unsupported Backend! Supported: {list(config.Backend.__members__)}")
    if config.Backend(args.r) is not config.Backend.Model:
        config.set_platform(config.Backend(args.r), args.v)  # says what an NPU run needs
    known = [p.value for p in config.Platform]
    if args.v is not None and args.v not in known:
        raise ValueError(f"Unsupported Platform! Supported: {known}")
    return None if args.v is None else config.Platform(args.v)
