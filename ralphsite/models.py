"""The ralphsite app's models, defined in the base layer (`ralphsite.core.models`) that every app imports.

Django registers an app's models by importing `<app>.models`; the names are listed here for that.
"""

from ralphsite.core.models import ApiToken, SeedRow, ThrottleWindow

__all__ = ["ApiToken", "SeedRow", "ThrottleWindow"]
