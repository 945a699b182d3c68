# PSNR and percent error of an image against a truth, as docs/CONVENTIONS.md
# defines them, from two `bart show -s '\n' -f '%+.9e%+.9ei'` listings (truth
# first, then image, concatenated; NT = truth's value count). RESCALE=1 first
# multiplies the image by the least-squares optimal complex scalar. DIGITS: the decimals printed
# (2 unless given).
function parse(s, out) {
    sub(/i$/, "", s)
    # split "+a.bcde+XX+f.ghie-YY" at the sign that starts the imaginary part
    match(s, /^[+-][0-9.]+e[+-][0-9]+/)
    out[1] = substr(s, 1, RLENGTH) + 0
    out[2] = substr(s, RLENGTH + 1) + 0
}
NR <= NT { parse($1, v); tr[NR] = v[1]; ti[NR] = v[2]; next }
{ parse($1, v); j = NR - NT; xr[j] = v[1]; xi[j] = v[2] }
END {
    n = NT
    ar = 1; ai = 0
    if (RESCALE) {
        nr = 0; ni = 0; den = 0
        for (j = 1; j <= n; j++) {  # <x, t> = sum conj(x) t
            nr += xr[j] * tr[j] + xi[j] * ti[j]
            ni += xr[j] * ti[j] - xi[j] * tr[j]
            den += xr[j] * xr[j] + xi[j] * xi[j]
        }
        if (den > 0) { ar = nr / den; ai = ni / den }
    }
    e2 = 0; t2 = 0; tmax = 0
    for (j = 1; j <= n; j++) {
        yr = ar * xr[j] - ai * xi[j] - tr[j]
        yi = ar * xi[j] + ai * xr[j] - ti[j]
        e2 += yr * yr + yi * yi
        t2 += tr[j] * tr[j] + ti[j] * ti[j]
        m = sqrt(tr[j] * tr[j] + ti[j] * ti[j]); if (m > tmax) tmax = m
    }
    if (DIGITS == "") DIGITS = 2
    printf "%." DIGITS "f %." DIGITS "f\n", 20 * log(tmax / sqrt(e2 / n)) / log(10), 100 * sqrt(e2 / t2)
}
