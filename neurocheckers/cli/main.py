"""The entry point: runs the app, turning errors into one line and Ctrl-C into exit status 130."""

from __future__ import annotations

import contextlib
import sys
import threading
from collections.abc import Iterator

import typer

from neurocheckers.cli.common import INTERRUPT_HINTS, UserError, app


def main(argv: list[str] | None = None) -> int:
    """Entry point: run the app, turning usage and input errors into one-line messages.

    Run as the program (``argv`` None), an interrupt (Ctrl-C) ends the process at once with exit
    status 130 (``os._exit``): compiled work still running in XLA's threads would otherwise keep
    the process, and the cores, busy until it finished. In-process callers get 130 returned.
    """
    import os

    from neurocheckers.devices import backend_initialized, use_host_devices
    from neurocheckers.runtime import configure_jax

    if not backend_initialized():  # in-process callers (tests) keep the devices they already have
        # One host device per core: evolution splits the population across them (same results).
        wanted = os.environ.get("NEUROCHECKERS_DEVICES", "")
        if wanted and not (wanted.isdigit() and int(wanted) >= 1):
            print(
                f"neurocheckers: error: NEUROCHECKERS_DEVICES must be >= 1, got {wanted!r}", file=sys.stderr
            )
            return 2
        use_host_devices(int(wanted) if wanted else None)
    configure_jax()
    if argv is None:
        exit_soon_after_an_interrupt()
    code = _run_app(argv)
    if code == 130:
        print_aborted()
        if argv is None:
            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(130)
    return code


def print_aborted() -> None:
    """The message of a program stopped by Ctrl-C, with the hints of the command that ran."""
    print("\n".join(["neurocheckers: aborted", *INTERRUPT_HINTS]), file=sys.stderr, flush=True)


INTERRUPT_GRACE_SECONDS = 3.0
"""How long Ctrl-C waits for the program to stop on its own before the process is ended."""
_SAVING = threading.Event()


@contextlib.contextmanager
def saving_after_an_interrupt() -> Iterator[None]:
    """Keep the process alive past the grace time after Ctrl-C while this block saves what was done
    (a match's finished games); a second Ctrl-C still ends it at once."""
    _SAVING.set()
    try:
        yield
    finally:
        _SAVING.clear()


def exit_soon_after_an_interrupt() -> None:
    """End the process with status 130 a little after Ctrl-C, even if the main thread is stuck.

    Python runs its interrupt handler only when the main thread next executes Python code, which a
    long compile or a blocking wait on XLA's threads can put off for minutes. The C-level signal
    handler writes the signal number to the wakeup descriptor at once, so a watcher thread sees it.
    """
    import os
    import signal
    import socket
    import threading
    import time

    reader, writer = socket.socketpair()
    writer.setblocking(False)
    signal.set_wakeup_fd(writer.fileno(), warn_on_full_buffer=False)

    def watch(writer: socket.socket = writer) -> None:  # holds the writer: closing it unsets the fd
        while signal.SIGINT not in (received := reader.recv(64)):
            if not received:
                return
        time.sleep(INTERRUPT_GRACE_SECONDS)  # the main thread usually stops cleanly within this
        if _wait_while_saving(reader):
            time.sleep(INTERRUPT_GRACE_SECONDS)  # for the command to end on its own after saving
        # stderr may be a full pipe that nobody reads: the message must not keep the process alive.
        threading.Thread(target=print_aborted, daemon=True).start()
        time.sleep(0.5)
        os._exit(130)

    threading.Thread(target=watch, name="interrupt-watcher", daemon=True).start()


def _wait_while_saving(reader) -> bool:
    """Wait while a command saves its work after Ctrl-C (``saving_after_an_interrupt``). True when
    it waited and the saving ended; False at once when nothing was being saved or Ctrl-C came again
    (``reader``: the signal wakeup socket)."""
    import signal

    reader.settimeout(0.1)
    waited = False
    while _SAVING.is_set():
        waited = True
        try:
            if signal.SIGINT in reader.recv(64):
                return False
        except TimeoutError:
            pass
    return waited


def _run_app(argv: list[str] | None) -> int:
    """The app's exit status; errors are printed as one line, an interrupt gives 130."""
    try:
        # Outside standalone mode typer *returns* the code of a typer.Exit, and turns Ctrl-C into 130.
        code = app(args=argv, standalone_mode=False)
    except UserError as e:
        print(f"neurocheckers: error: {e}", file=sys.stderr)
        return 2
    except (typer.Abort, KeyboardInterrupt):
        return 130
    except typer.Exit as e:
        return e.exit_code
    except typer.TyperException as e:  # usage errors: bad option values, unknown commands
        if type(e).__name__ == "NoArgsIsHelpError":
            print(e.ctx.get_help() if getattr(e, "ctx", None) else "usage: neurocheckers COMMAND --help")
            return 0
        message = " ".join(e.format_message().split())
        print(f"neurocheckers: error: {message}", file=sys.stderr)
        return getattr(e, "exit_code", 2)
    return code if isinstance(code, int) else 0


if __name__ == "__main__":
    sys.exit(main())
