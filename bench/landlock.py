"""A minimal Landlock ruleset through ctypes, for the sandbox benchmark's comparison only.

Landlock (Linux 5.13+) is applied by a process to itself: here in the child between fork and
exec. The ruleset handles every write right, grants them under the given folders, and grants
reading everywhere; what Landlock cannot do (hide ``~/.ssh`` inside a readable home, deny
connecting to 127.0.0.1 before ABI 4) is why the project uses bubblewrap instead.
"""

from __future__ import annotations

import ctypes
import os
from collections.abc import Callable, Sequence

_SYS_CREATE_RULESET = 444
_SYS_ADD_RULE = 445
_SYS_RESTRICT_SELF = 446
_PR_SET_NO_NEW_PRIVS = 38
_RULE_PATH_BENEATH = 1
_CREATE_RULESET_VERSION = 1

_EXECUTE, _WRITE_FILE, _READ_FILE, _READ_DIR = 1 << 0, 1 << 1, 1 << 2, 1 << 3
_WRITES = sum(1 << bit for bit in range(4, 13)) | _WRITE_FILE  # remove/make kinds, refer, truncate
_READS = _EXECUTE | _READ_FILE | _READ_DIR


class _RulesetAttr(ctypes.Structure):
    _fields_ = [("handled_access_fs", ctypes.c_uint64)]


class _PathBeneath(ctypes.Structure):
    _pack_ = 1
    _fields_ = [("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32)]


_libc = ctypes.CDLL(None, use_errno=True)
_libc.syscall.restype = ctypes.c_long


def abi_version() -> int:
    """The kernel's Landlock ABI (0: none)."""
    version = _libc.syscall(
        _SYS_CREATE_RULESET, None, ctypes.c_size_t(0), ctypes.c_uint32(_CREATE_RULESET_VERSION)
    )
    return max(0, int(version))


def restrictor(writable: Sequence[str]) -> Callable[[], None]:
    """A ``preexec_fn`` that confines the child: read anywhere, write only under ``writable``."""

    def apply() -> None:
        handled = _READS | _WRITES
        attr = _RulesetAttr(handled)
        ruleset = _libc.syscall(
            _SYS_CREATE_RULESET, ctypes.byref(attr), ctypes.c_size_t(ctypes.sizeof(attr)), 0
        )
        if ruleset < 0:
            raise OSError(ctypes.get_errno(), "landlock_create_ruleset")
        for path, access in [("/", _READS), *((folder, handled) for folder in writable)]:
            fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
            rule = _PathBeneath(access, fd)
            done = _libc.syscall(
                _SYS_ADD_RULE, ctypes.c_int(ruleset), _RULE_PATH_BENEATH, ctypes.byref(rule), 0
            )
            os.close(fd)
            if done < 0:
                raise OSError(ctypes.get_errno(), "landlock_add_rule")
        if _libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
            raise OSError(ctypes.get_errno(), "prctl")
        if _libc.syscall(_SYS_RESTRICT_SELF, ctypes.c_int(ruleset), 0) < 0:
            raise OSError(ctypes.get_errno(), "landlock_restrict_self")
        os.close(ruleset)

    return apply
