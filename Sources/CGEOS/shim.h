// The GEOS C API as Fencepost sees it: the reentrant (_r) functions only, plus
// guarded helpers for calls that exist only in newer GEOS releases.
#ifndef FENCEPOST_CGEOS_SHIM_H
#define FENCEPOST_CGEOS_SHIM_H

#define GEOS_USE_ONLY_R_API
#include <geos_c.h>

#define FP_GEOS_AT_LEAST(major, minor) \
    (GEOS_VERSION_MAJOR > (major) || (GEOS_VERSION_MAJOR == (major) && GEOS_VERSION_MINOR >= (minor)))

/// Whether a prepared geometry intersects the point (x, y); for an areal geometry this is
/// "covers": the boundary counts. Returns 1, 0, or 2 on error, as GEOS does.
/// GEOS 3.12 tests the coordinates directly; older releases need a temporary point.
static inline char fp_prepared_intersects_xy(GEOSContextHandle_t handle,
                                             const GEOSPreparedGeometry *prepared,
                                             double x, double y) {
#if FP_GEOS_AT_LEAST(3, 12)
    return GEOSPreparedIntersectsXY_r(handle, prepared, x, y);
#else
    GEOSGeometry *point = GEOSGeom_createPointFromXY_r(handle, x, y);
    if (point == NULL) {
        return 2;
    }
    char result = GEOSPreparedIntersects_r(handle, prepared, point);
    GEOSGeom_destroy_r(handle, point);
    return result;
#endif
}

#endif
