// zlib, for reading gzip-compressed traces (.gpx.gz and the like) and zip archives.
#ifndef FENCEPOST_CZLIB_SHIM_H
#define FENCEPOST_CZLIB_SHIM_H
#include <zlib.h>

/// inflateInit2 is a macro; this makes it callable from Swift. windowBits 15 + 32 accepts
/// both zlib and gzip headers.
static inline int fp_inflate_init_auto(z_stream *stream) {
    return inflateInit2(stream, 15 + 32);
}

/// Raw deflate, no header (window bits -15): the data of a zip entry.
static inline int fp_inflate_init_raw(z_stream *stream) {
    return inflateInit2(stream, -15);
}
#endif
