"""The camera: world (y up) to screen (y down) transform and a smooth follow.

The view is described by the world point at the centre of the screen, a zoom (screen pixels
per world unit) and the viewport size, which the renderer refreshes from the target
surface every frame so a resized window needs no event handling here.
"""

from __future__ import annotations

import logging
import math

logger = logging.getLogger(__name__)

Vec = tuple[float, float]


class Camera:
    """Follows a target with a critically damped spring and keeps the view inside the level.

    The level spans x in [0, level_width] and y in [bottom, level_height]; ``bottom`` may
    be negative when the ground dips below y = 0.

    ``smooth_time`` is roughly the time the camera takes to catch up with a target that
    stopped (in seconds); the spring never overshoots, whatever the frame time. Screen
    positions use a pixel-snapped origin so sprites and the pre-rendered background move
    by the same whole pixels and never shimmer against each other.
    """

    def __init__(
        self,
        level_width: float,
        level_height: float,
        viewport: tuple[int, int] = (1280, 720),
        *,
        zoom: float = 1.0,
        smooth_time: float = 0.25,
        bottom: float = 0.0,
    ) -> None:
        if zoom <= 0:
            raise ValueError(f"zoom must be positive, got {zoom}")
        if bottom >= level_height:
            raise ValueError(f"bottom {bottom} must be below the level top {level_height}")
        self.level_width = level_width
        self.level_height = level_height
        self.bottom = bottom
        self.zoom = zoom
        self.smooth_time = smooth_time
        self.viewport = viewport
        self.x = level_width / 2
        self.y = (bottom + level_height) / 2
        self._vx = 0.0
        self._vy = 0.0
        self._origin = (0, 0)
        self._snapped = False
        self._update_origin()

    # -- view state -------------------------------------------------------------------

    def set_viewport(self, size: tuple[int, int]) -> None:
        """Adopt a new screen size, keeping the centre, and re-clamp."""
        if size != self.viewport:
            self.viewport = size
            self._clamp()

    @property
    def origin(self) -> tuple[int, int]:
        """Screen pixel of world point (0, level_height): where the level's top-left lands."""
        return self._origin

    @property
    def half_extent(self) -> Vec:
        """Half the visible width and height, in world units."""
        return self.viewport[0] / (2 * self.zoom), self.viewport[1] / (2 * self.zoom)

    def visible_world(self) -> tuple[float, float, float, float]:
        """The visible area as (left, bottom, right, top) in world units."""
        hw, hh = self.half_extent
        return self.x - hw, self.y - hh, self.x + hw, self.y + hh

    # -- transforms -------------------------------------------------------------------

    def world_to_screen(self, x: float, y: float) -> Vec:
        """Screen position (pixels, y down) of world point (x, y)."""
        ox, oy = self._origin
        return ox + x * self.zoom, oy + (self.level_height - y) * self.zoom

    def screen_to_world(self, sx: float, sy: float) -> Vec:
        """World point under screen pixel (sx, sy); the inverse of ``world_to_screen``."""
        ox, oy = self._origin
        return (sx - ox) / self.zoom, self.level_height - (sy - oy) / self.zoom

    # -- motion -----------------------------------------------------------------------

    def snap_to(self, x: float, y: float) -> None:
        """Jump to a target at once (first frame, teleports), then clamp."""
        self.x, self.y = x, y
        self._vx = self._vy = 0.0
        self._snapped = True
        self._clamp()

    def follow(self, x: float, y: float, dt: float) -> None:
        """Move toward target (x, y) over a frame of ``dt`` seconds, then clamp.

        The first call snaps, so the game never opens with a pan across the level.
        """
        if not self._snapped:
            self.snap_to(x, y)
            return
        self.x, self._vx = _smooth_damp(self.x, x, self._vx, self.smooth_time, dt)
        self.y, self._vy = _smooth_damp(self.y, y, self._vy, self.smooth_time, dt)
        self._clamp()

    def _clamp(self) -> None:
        hw, hh = self.half_extent
        self.x, hit_x = _clamp_axis(self.x, hw, self.level_width)
        low, hit_y = _clamp_axis(self.y - self.bottom, hh, self.level_height - self.bottom)
        self.y = low + self.bottom
        # Velocity into a wall would wind up the spring and make the camera lag when the
        # target turns back, so it is dropped at the bounds.
        if hit_x:
            self._vx = 0.0
        if hit_y:
            self._vy = 0.0
        self._update_origin()

    def _update_origin(self) -> None:
        hw, hh = self.half_extent
        left, top = self.x - hw, self.y + hh
        self._origin = (
            -round(left * self.zoom),
            -round((self.level_height - top) * self.zoom),
        )


def _clamp_axis(centre: float, half: float, length: float) -> tuple[float, bool]:
    """Keep [centre - half, centre + half] inside [0, length]; centre it if it is wider."""
    if 2 * half >= length:
        return length / 2, True
    low, high = half, length - half
    if centre < low:
        return low, True
    if centre > high:
        return high, True
    return centre, False


def _smooth_damp(
    current: float, target: float, velocity: float, smooth_time: float, dt: float
) -> tuple[float, float]:
    """One step of a critically damped spring (Game Programming Gems 4, 1.10).

    Stable for any ``dt``; returns the new position and velocity.
    """
    if dt <= 0:
        return current, velocity
    if smooth_time <= 0:
        return target, 0.0
    omega = 2.0 / smooth_time
    x = omega * dt
    decay = 1.0 / (1.0 + x + 0.48 * x * x + 0.235 * x * x * x)  # ~exp(-x), cheap and stable
    change = current - target
    temp = (velocity + omega * change) * dt
    velocity = (velocity - omega * temp) * decay
    new = target + (change + temp) * decay
    if math.isnan(new):  # a NaN target must not poison the camera for the rest of the run
        return current, 0.0
    return new, velocity
