"""tilesim's errors, as the command line reports them.

The message of each is the text `tilesim` prints after ``tilesim: error:`` and ``exit_code`` is the exit
code it returns (README.md, "Exit codes"): 2 bad input, 3 does not fit, 1 internal error.
"""


class Error(Exception):
    """An error tilesim reports; ``exit_code`` is the command line's for it."""

    def __init__(self, message, file="", json_path="", exit_code=1):
        super().__init__(message)
        self.message = message
        self.file = file
        self.json_path = json_path
        self.exit_code = exit_code


class InputError(Error, ValueError):
    """Bad input (exit code 2): the message names the file (if any), the JSON path, what was expected
    and what was found, as ``FILE: JSON_PATH: expected EXPECTED, found FOUND``."""

    def __init__(self, message, file="", json_path=""):
        super().__init__(message, file, json_path, 2)


class DoesNotFitError(Error):
    """The workload is valid but does not fit the machine (exit code 3).

    ``result``: when some backends of a ``tilesim.run`` refused the workload and the others ran, the
    ``Result`` of the run (their numbers, and ``result.refused``: backend -> why); None when no backend
    ran."""

    def __init__(self, message, result=None):
        super().__init__(message, "", "", 3)
        self.result = result
