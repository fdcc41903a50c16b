"""Problems found in input data, each naming the file, line and field it is about."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Problem:
    file: str
    line: int | None
    field: str | None
    message: str

    def __str__(self) -> str:
        where = self.file
        if self.line is not None:
            where += f":{self.line}"
        if self.field:
            where += f": {self.field}"
        return f"{where}: {self.message}"

    def as_dict(self) -> dict:
        return {"file": self.file, "line": self.line, "field": self.field, "message": self.message}


class DataValidationError(Exception):
    """Raised with every problem found, so a user can fix them all in one pass."""

    def __init__(self, problems: list[Problem]):
        self.problems = list(problems)
        shown = "\n".join(f"  {p}" for p in self.problems[:50])
        more = "" if len(self.problems) <= 50 else f"\n  ... and {len(self.problems) - 50} more"
        super().__init__(f"{len(self.problems)} problem(s) in the input:\n{shown}{more}")


class ProblemList(list):
    """Problems as they are found. With `stop_after`, the one that makes that many raises
    DataValidationError at once, with a last problem saying the check stopped there: a
    file bad on every line is refused after its first problems, not read to its end with
    every problem held in memory."""

    def __init__(self, *args, stop_after: int | None = None):
        super().__init__(*args)
        self.stop_after = stop_after

    def add(self, file: str, line: int | None, field: str | None, message: str) -> None:
        self.append(Problem(file=file, line=line, field=field, message=message))
        if self.stop_after is not None and len(self) >= self.stop_after:
            self.append(
                Problem(
                    file=file,
                    line=None,
                    field=None,
                    message=f"the check stopped after {self.stop_after} problems; "
                    "fix these and import the file again to see any others",
                )
            )
            raise DataValidationError(self)

    def raise_if_any(self) -> None:
        if self:
            raise DataValidationError(self)
