"""The larger decor pieces: houses, the well, the market stall and the forge."""

from __future__ import annotations

import pygame

from game.render.decor_canvas import (
    AWNING_A,
    AWNING_B,
    BARK,
    DOOR,
    ROOF,
    ROOF_DARK,
    Canvas,
    line_w,
    sign_board,
    window_pane,
)
from game.render.palette import INK, darken, material


def draw_house(c: Canvas) -> None:
    """A half-timbered house: walls, framing, a door, windows and its own roof unless the
    level gives it one."""
    own_roof = c.roof_y is None
    roof_h = round(c.rect.height * 0.38) if own_roof else 0
    wall = pygame.Rect(c.rect.left, c.rect.top + roof_h, c.rect.width, c.rect.height - roof_h)
    wall_fill = c.look.fill if c.look.fill != material("wood").fill else (232, 214, 180)
    pygame.draw.rect(c.layer, wall_fill, wall)
    beam = darken(c.look.outline, 0.9)
    # Timber framing: posts and a top rail, the way the village's half-timbered houses look.
    for x in (wall.left, wall.centerx, wall.right - line_w(c.zoom, 5)):
        pygame.draw.rect(c.layer, beam, (x, wall.top, line_w(c.zoom, 5), wall.height))
    pygame.draw.rect(c.layer, beam, (wall.left, wall.top, wall.width, line_w(c.zoom, 5)))
    if own_roof:
        _gable_roof(c, wall.top)
    door_w = max(8, round(wall.width * 0.2))
    door_h = round(wall.height * 0.62)
    door = pygame.Rect(0, 0, door_w, door_h)
    door.midbottom = (wall.centerx + round(wall.width * 0.12), wall.bottom)
    pygame.draw.rect(
        c.layer, DOOR, door, border_top_left_radius=door_w // 2, border_top_right_radius=door_w // 2
    )
    pygame.draw.rect(
        c.layer,
        darken(DOOR, 0.6),
        door,
        line_w(c.zoom),
        border_top_left_radius=door_w // 2,
        border_top_right_radius=door_w // 2,
    )
    pygame.draw.circle(
        c.layer, (230, 196, 90), (door.right - door_w // 4, door.centery + 4), line_w(c.zoom)
    )
    win = max(8, round(wall.width * 0.18))
    for cx in (wall.left + round(wall.width * 0.2), wall.right - round(wall.width * 0.14)):
        if abs(cx - door.centerx) > door_w:
            window_pane(
                c.layer,
                pygame.Rect(cx - win // 2, wall.top + round(wall.height * 0.2), win, win),
                beam,
                c.zoom,
            )
    sign_board(c, (c.rect.centerx, wall.top + round(wall.height * 0.1)))


def _gable_roof(c: Canvas, eaves: int) -> None:
    roof_h = eaves - c.rect.top
    overhang = round(c.rect.width * 0.08)
    chimney = pygame.Rect(
        c.rect.right - round(c.rect.width * 0.3),
        c.rect.top + round(roof_h * 0.15),
        round(c.rect.width * 0.1),
        round(roof_h * 0.6),
    )
    pygame.draw.rect(c.layer, (150, 96, 76), chimney)
    pygame.draw.rect(c.layer, darken((150, 96, 76), 0.6), chimney, line_w(c.zoom))
    roof = [
        (c.rect.left - overhang, eaves + 2),
        (c.rect.centerx, c.rect.top),
        (c.rect.right + overhang, eaves + 2),
    ]
    pygame.draw.polygon(c.layer, ROOF, roof)
    for i in range(1, 4):  # tile rows
        t = i / 4
        y = c.rect.top + roof_h * t
        half = (c.rect.width / 2 + overhang) * t
        pygame.draw.line(
            c.layer, ROOF_DARK, (c.rect.centerx - half, y), (c.rect.centerx + half, y), 1
        )
    pygame.draw.polygon(c.layer, ROOF_DARK, roof, line_w(c.zoom, 3))


def draw_well(c: Canvas) -> None:
    """The well: its stone ring, posts and little roof (or posts up to the level's roof)."""
    stone = material("stone") if c.look.fill == material("wood").fill else c.look
    own_roof = c.roof_y is None
    ring_h = round(c.rect.height * (0.38 if own_roof else 0.5))
    ring = pygame.Rect(c.rect.left, c.rect.bottom - ring_h, c.rect.width, ring_h)
    post_w = max(3, round(c.rect.width * 0.08))
    roof_h = round(c.rect.height * 0.22) if own_roof else 0
    post_top = c.rect.top + roof_h // 2 if c.roof_y is None else c.roof_y
    for x in (ring.left + post_w, ring.right - 2 * post_w):
        pygame.draw.rect(c.layer, BARK, (x, post_top, post_w, ring.top - post_top))
    axle_y = post_top + max(roof_h, round((ring.top - post_top) * 0.3))
    pygame.draw.line(
        c.layer,
        darken(BARK, 0.7),
        (ring.left + post_w, axle_y),
        (ring.right - post_w, axle_y),
        line_w(c.zoom, 3),
    )
    pygame.draw.line(
        c.layer, INK, (c.rect.centerx, axle_y), (c.rect.centerx, ring.top - round(ring_h * 0.3)), 1
    )
    bucket = pygame.Rect(0, 0, round(c.rect.width * 0.16), round(ring_h * 0.3))
    bucket.midtop = (c.rect.centerx, ring.top - round(ring_h * 0.3))
    pygame.draw.rect(c.layer, material("wood").fill, bucket)
    pygame.draw.rect(c.layer, material("metal").outline, bucket, 1)
    if own_roof:
        roof = [
            (c.rect.left - 6, c.rect.top + roof_h),
            (c.rect.centerx, c.rect.top),
            (c.rect.right + 6, c.rect.top + roof_h),
        ]
        pygame.draw.polygon(c.layer, ROOF, roof)
        pygame.draw.polygon(c.layer, ROOF_DARK, roof, line_w(c.zoom))
    pygame.draw.rect(c.layer, stone.fill, ring, border_top_left_radius=4, border_top_right_radius=4)
    brick_h = max(4, ring_h // 3)
    for row, y in enumerate(range(ring.top, ring.bottom, brick_h)):
        pygame.draw.line(c.layer, stone.outline, (ring.left, y), (ring.right - 1, y), 1)
        offset = (row % 2) * brick_h
        for x in range(ring.left + offset, ring.right, brick_h * 2):
            pygame.draw.line(c.layer, stone.outline, (x, y), (x, min(ring.bottom, y + brick_h)), 1)
    pygame.draw.rect(
        c.layer,
        stone.outline,
        ring,
        line_w(c.zoom),
        border_top_left_radius=4,
        border_top_right_radius=4,
    )
    # The sign hangs high under the roof: at the ring it would sit behind whoever is at
    # the well, under their name tag.
    sign_board(c, (c.rect.centerx, post_top + round(16 * c.zoom)))


def draw_stall(c: Canvas) -> None:
    """The market stall: a counter under a striped awning."""
    wood = material("wood")
    counter_h = round(c.rect.height * 0.4)
    counter = pygame.Rect(c.rect.left, c.rect.bottom - counter_h, c.rect.width, counter_h)
    post_w = max(3, round(c.rect.width * 0.05))
    awning_h = round(c.rect.height * 0.24)
    for x in (c.rect.left + post_w, c.rect.right - 2 * post_w):
        pygame.draw.rect(
            c.layer,
            wood.outline,
            (x, c.rect.top + awning_h // 2, post_w, c.rect.height - awning_h // 2),
        )
    pygame.draw.rect(c.layer, wood.fill, counter)
    for y in range(counter.top, counter.bottom, max(4, round(10 * c.zoom))):
        pygame.draw.line(c.layer, wood.detail, (counter.left, y), (counter.right - 1, y), 1)
    pygame.draw.rect(c.layer, wood.outline, counter, line_w(c.zoom))
    # Goods on the counter: a row of apples and a loaf or two.
    for i, x in enumerate(
        range(counter.left + 14, counter.right - 10, max(10, round(16 * c.zoom)))
    ):
        color = (206, 40, 44) if i % 3 else (222, 170, 90)
        pygame.draw.circle(
            c.layer, color, (x, counter.top - round(5 * c.zoom)), max(3, round(6 * c.zoom))
        )
    stripes = 7
    stripe_w = (c.rect.width + 16) / stripes
    left = c.rect.left - 8
    for i in range(stripes):
        color = AWNING_A if i % 2 == 0 else AWNING_B
        x0 = left + i * stripe_w
        pygame.draw.rect(c.layer, color, (round(x0), c.rect.top, round(stripe_w) + 1, awning_h))
        pygame.draw.circle(c.layer, color, (x0 + stripe_w / 2, c.rect.top + awning_h), stripe_w / 2)
    pygame.draw.line(
        c.layer,
        darken(AWNING_A, 0.6),
        (left, c.rect.top),
        (left + stripes * stripe_w, c.rect.top),
        line_w(c.zoom),
    )
    sign_board(c, (c.rect.centerx, c.rect.top + awning_h // 2))


def draw_forge(c: Canvas) -> None:
    """The forge: its hearth and chimney, with the sign on a post above."""
    stone = c.look
    chimney = pygame.Rect(0, 0, max(6, c.rect.width // 4), c.rect.height)
    chimney.bottomright = (c.rect.right - c.rect.width // 8, c.rect.bottom)
    pygame.draw.rect(c.layer, darken(stone.fill, 0.9), chimney)
    pygame.draw.rect(c.layer, stone.outline, chimney, line_w(c.zoom))
    body = pygame.Rect(c.rect.left, c.rect.top + c.rect.height * 2 // 5, c.rect.width, 0)
    body.height = c.rect.bottom - body.top
    pygame.draw.rect(c.layer, stone.fill, body, border_top_left_radius=6, border_top_right_radius=6)
    pygame.draw.rect(
        c.layer, stone.outline, body, line_w(c.zoom), border_top_left_radius=6,
        border_top_right_radius=6,
    )  # fmt: skip
    mouth = pygame.Rect(0, 0, body.width // 2, body.height // 2)
    mouth.midbottom = (body.centerx, body.bottom - body.height // 8)
    radius = mouth.width // 2
    pygame.draw.rect(c.layer, (60, 30, 24), mouth, border_top_left_radius=radius,
                     border_top_right_radius=radius)  # fmt: skip
    glow = mouth.inflate(-mouth.width // 3, -mouth.height // 3)
    glow.bottom = mouth.bottom - 2
    pygame.draw.ellipse(c.layer, (246, 140, 40), glow)
    pygame.draw.ellipse(c.layer, (255, 220, 110), glow.inflate(-glow.width // 2, -glow.height // 2))
    # On a post above the chimney, clear of the smith's name tag while they work.
    if c.label:
        sign_y = chimney.top - round(24 * c.zoom)
        post = pygame.Rect(0, 0, line_w(c.zoom, 4), chimney.top - sign_y)
        post.midbottom = chimney.midtop
        pygame.draw.rect(c.layer, BARK, post)
        sign_board(c, (chimney.centerx, sign_y))
