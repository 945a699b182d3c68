#!/usr/bin/env python3
"""Draws docs/images/ct-geometry.svg, the picture of docs/CONVENTIONS.md's "Cone-beam CT":
the rotation axis z, the source orbit, the source s(β), the flat detector with its u and v
axes, the isocentre and the volume, seen from +z (the orbit plane) with the detector's
v axis drawn as the out-of-plane direction. Plain Python, no dependencies:
    python3 tools/ct/geometry_figure.py docs/images/ct-geometry.svg
"""
import math
import sys

W, H = 720, 520
CX, CY = 300, 270          # the isocentre on the page
SCALE = 0.34               # page units per mm
D_SO, D_SD = 500.0, 800.0  # the demo cases' distances
BETA = math.radians(35.0)  # the drawn view angle
DET_HALF = 330.0           # half the detector width, mm
VOLUME_HALF = 128.0        # half the volume's side, mm


def page(x, y):
    """mm in the orbit plane (x right, y up) -> SVG coordinates (y down)."""
    return CX + SCALE * x, CY - SCALE * y


def line(p, q, style):
    return f'<line x1="{p[0]:.1f}" y1="{p[1]:.1f}" x2="{q[0]:.1f}" y2="{q[1]:.1f}" {style}/>'


def text(p, s, extra=""):
    return f'<text x="{p[0]:.1f}" y="{p[1]:.1f}" {extra}>{s}</text>'


def arrow(p, q, colour):
    return line(p, q, f'stroke="{colour}" stroke-width="2" marker-end="url(#arrow-{colour})"')


def main(out):
    c, s = math.cos(BETA), math.sin(BETA)
    src = (D_SO * c, D_SO * s)
    det_c = (-(D_SD - D_SO) * c, -(D_SD - D_SO) * s)
    e_u = (-s, c)
    det_a = (det_c[0] - DET_HALF * e_u[0], det_c[1] - DET_HALF * e_u[1])
    det_b = (det_c[0] + DET_HALF * e_u[0], det_c[1] + DET_HALF * e_u[1])
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" viewBox="0 0 {W} {H}" '
             'font-family="DejaVu Sans, sans-serif" font-size="14">',
             '<rect width="100%" height="100%" fill="white"/>', '<defs>']
    for colour in ("black", "crimson", "royalblue", "seagreen"):
        parts.append(f'<marker id="arrow-{colour}" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" '
                     f'markerHeight="7" orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" fill="{colour}"/></marker>')
    parts.append('</defs>')
    # The orbit and the volume.
    parts.append(f'<circle cx="{CX}" cy="{CY}" r="{SCALE * D_SO:.1f}" fill="none" stroke="gray" stroke-dasharray="6 5"/>')
    v0, v1 = page(-VOLUME_HALF, VOLUME_HALF), page(VOLUME_HALF, -VOLUME_HALF)
    parts.append(f'<rect x="{v0[0]:.1f}" y="{v0[1]:.1f}" width="{v1[0] - v0[0]:.1f}" height="{v1[1] - v0[1]:.1f}" '
                 'fill="#eef3fb" stroke="royalblue"/>')
    parts.append(text((v0[0] + 6, v0[1] + 18), "volume (x fastest)", 'fill="royalblue" font-size="12"'))
    # World axes x, y at the isocentre; z out of the page.
    parts.append(arrow(page(0, 0), page(150, 0), "black"))
    parts.append(arrow(page(0, 0), page(0, 150), "black"))
    parts.append(text(page(155, -14), "x"))
    parts.append(text(page(-16, 155), "y"))
    parts.append(f'<circle cx="{CX}" cy="{CY}" r="6" fill="white" stroke="black"/><circle cx="{CX}" cy="{CY}" r="2"/>')
    parts.append(text(page(-95, -22), "isocentre, z out of page", 'font-size="12"'))
    # The fan: source to the detector's ends and centre.
    for end in (det_a, det_b):
        parts.append(line(page(*src), page(*end), 'stroke="orange" stroke-width="1.5"'))
    parts.append(line(page(*src), page(*det_c), 'stroke="orange" stroke-dasharray="4 4"'))
    # The detector and its axes.
    parts.append(line(page(*det_a), page(*det_b), 'stroke="seagreen" stroke-width="6"'))
    parts.append(arrow(page(*det_c), page(det_c[0] + 140 * e_u[0], det_c[1] + 140 * e_u[1]), "seagreen"))
    parts.append(text(page(det_c[0] + 150 * e_u[0] - 10, det_c[1] + 150 * e_u[1]), "u (columns)", 'fill="seagreen"'))
    parts.append(text(page(det_c[0] - 100, det_c[1] - 60),
                      "detector, v = z (rows) out of page", 'fill="seagreen" font-size="12"'))
    # The source and β.
    sp = page(*src)
    parts.append(f'<circle cx="{sp[0]:.1f}" cy="{sp[1]:.1f}" r="8" fill="crimson"/>')
    parts.append(text((sp[0] + 12, sp[1] - 8), "source s(β) = D_so (cos β, sin β, 0)", 'fill="crimson"'))
    r = SCALE * 90
    end = page(90 * c, 90 * s)
    parts.append(f'<path d="M {CX + r:.1f} {CY} A {r:.1f} {r:.1f} 0 0 0 {end[0]:.1f} {end[1]:.1f}" fill="none" '
                 'stroke="crimson" marker-end="url(#arrow-crimson)"/>')
    parts.append(text(page(100, 30), "β", 'fill="crimson" font-size="16"'))
    parts.append(line(page(0, 0), page(*src), 'stroke="crimson" stroke-dasharray="2 3"'))
    # Distances.
    parts.append(text((20, H - 52), "D_so: source to isocentre; D_sd: source to detector, > D_so", 'font-size="12"'))
    parts.append(text((20, H - 34), "pixel (iu, iv): u = (iu − (n_u − 1)/2)·p_u + u0,  v = (iv − (n_v − 1)/2)·p_v + v0",
                      'font-size="12"'))
    parts.append(text((20, H - 16), "β counter-clockwise seen from +z; projections u fastest, then v, then view",
                      'font-size="12"'))
    parts.append('</svg>')
    with open(out, "w", encoding="utf-8") as f:
        f.write("\n".join(parts) + "\n")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "docs/images/ct-geometry.svg")
