#ifndef CVIPS_SHIM_H
#define CVIPS_SHIM_H
/* libvips 8.14 (Debian 12) behind non-variadic functions: Swift cannot call C's `...`, and every
 * vips operation is variadic. Only the Vips target imports this module. */
#include <string.h>
#include <vips/vips.h>

/* The loaders a photo may go through; anything else is refused before it is opened. */
enum {
    SCV_FORMAT_NONE = 0,
    SCV_FORMAT_JPEG = 1,
    SCV_FORMAT_PNG = 2,
    SCV_FORMAT_WEBP = 3,
    SCV_FORMAT_GIF = 4
};

/* What a photo's header says, read without decoding its pixels; width and height as shown. */
typedef struct {
    int width;
    int height;
    int interlaced;
    int format;
} scv_header;

/* Starts libvips once, with the settings for untrusted input: no operation cache, one worker
 * per pipeline, untrusted loaders blocked and only the JPEG, PNG, WebP and GIF loaders allowed.
 * 0 on success. */
static inline int scv_init(void) {
    if (VIPS_INIT("scavengerd")) return -1;
    vips_cache_set_max(0);
    vips_cache_set_max_mem(0);
    vips_cache_set_max_files(0);
    vips_concurrency_set(1);
    vips_block_untrusted_set(TRUE);
    vips_operation_block_set("VipsForeignLoad", TRUE);
    vips_operation_block_set("VipsForeignLoadJpeg", FALSE);
    vips_operation_block_set("VipsForeignLoadPng", FALSE);
    vips_operation_block_set("VipsForeignLoadWebp", FALSE);
    vips_operation_block_set("VipsForeignLoadNsgif", FALSE);
    return 0;
}

/* Copies and clears vips's (process-wide) error buffer into `out` (NUL-terminated). */
static inline void scv_take_error(char *out, size_t capacity) {
    const char *message = vips_error_buffer();
    if (capacity > 0) {
        strncpy(out, message ? message : "", capacity - 1);
        out[capacity - 1] = 0;
    }
    vips_error_clear();
}

/* The format of the allowed loader that takes `data`; SCV_FORMAT_NONE when none does. */
static inline int scv_format_of_loader(const char *loader) {
    if (loader == NULL) return SCV_FORMAT_NONE;
    if (strstr(loader, "Jpeg")) return SCV_FORMAT_JPEG;
    if (strstr(loader, "Png")) return SCV_FORMAT_PNG;
    if (strstr(loader, "Webp")) return SCV_FORMAT_WEBP;
    if (strstr(loader, "Gif") || strstr(loader, "gif")) return SCV_FORMAT_GIF; /* VipsForeignLoadNsgif… */
    return SCV_FORMAT_NONE;
}

/* Reads the header of the image in `data` (kept alive by the caller until this returns).
 * 0 on success; -1 when no allowed loader takes it or the header is broken. */
static inline int scv_probe(const void *data, size_t length, scv_header *header) {
    const char *loader = vips_foreign_find_load_buffer(data, length);
    int format = scv_format_of_loader(loader);
    if (format == SCV_FORMAT_NONE) {
        vips_error("scavenger", "no allowed loader for this image");
        return -1;
    }
    VipsImage *image = vips_image_new_from_buffer(data, length, "", "access", VIPS_ACCESS_SEQUENTIAL, NULL);
    if (image == NULL) return -1;
    /* As shown: an EXIF orientation of 5 to 8 turns the image a quarter. */
    int orientation = vips_image_get_orientation(image);
    int turned = orientation >= 5 && orientation <= 8;
    header->width = turned ? vips_image_get_height(image) : vips_image_get_width(image);
    header->height = turned ? vips_image_get_width(image) : vips_image_get_height(image);
    header->format = format;
    int interlaced = 0;
    if (vips_image_get_typeof(image, "interlaced") != 0) {
        if (vips_image_get_int(image, "interlaced", &interlaced)) interlaced = 0;
    }
    header->interlaced = interlaced != 0;
    g_object_unref(image);
    return 0;
}

/* A copy of `image` without the metadata a saver may write (EXIF with GPS, XMP, IPTC, the ICC
 * profile: the pixels are sRGB already). 8.14.1's webpsave ignores `strip`, and its savers
 * rebuild the EXIF blob from the `exif-ifd…` fields, so those go too. NULL on failure. */
static inline VipsImage *scv_without_metadata(VipsImage *image) {
    VipsImage *copy = NULL;
    if (vips_copy(image, &copy, NULL)) return NULL;
    gchar **fields = vips_image_get_fields(copy);
    for (int i = 0; fields != NULL && fields[i] != NULL; i++) {
        const char *name = fields[i];
        if (vips_isprefix("exif-", name) || vips_isprefix("xmp-", name) || vips_isprefix("iptc-", name)
                || vips_isprefix("icc-", name) || vips_isprefix("photoshop-", name) || vips_isprefix("gps", name)) {
            vips_image_remove(copy, name);
        }
    }
    g_strfreev(fields);
    vips_image_remove(copy, VIPS_META_ORIENTATION);
    return copy;
}

/* The image in `data` made to fit `edge` pixels on its longest side (never enlarged), turned
 * upright by its EXIF orientation, in sRGB, saved as JPEG (`webp` 0) or WebP (`webp` 1) without
 * metadata. The loader fails on the first error. On success `*out` (free with g_free) holds
 * `*out_length` bytes and 0 is returned; -1 otherwise. */
static inline int scv_thumbnail(const void *data, size_t length, int edge, int webp, void **out, size_t *out_length) {
    *out = NULL;
    *out_length = 0;
    if (scv_format_of_loader(vips_foreign_find_load_buffer(data, length)) == SCV_FORMAT_NONE) {
        vips_error("scavenger", "no allowed loader for this image");
        return -1;
    }
    VipsImage *thumbnail = NULL;
    if (vips_thumbnail_buffer((void *) data, length, &thumbnail, edge, "height", edge, "size", VIPS_SIZE_DOWN,
            "export_profile", "srgb", "option_string", "fail_on=error", NULL)) {
        return -1;
    }
    VipsImage *bare = scv_without_metadata(thumbnail);
    g_object_unref(thumbnail);
    if (bare == NULL) return -1;
    int failed;
    if (webp) {
        failed = vips_webpsave_buffer(bare, out, out_length, "Q", 80, "strip", TRUE, NULL);
    } else {
        failed = vips_jpegsave_buffer(bare, out, out_length, "Q", 82, "strip", TRUE, "optimize_coding", TRUE, NULL);
    }
    g_object_unref(bare);
    return failed ? -1 : 0;
}

/* Frees what scv_thumbnail gave. */
static inline void scv_free(void *bytes) { g_free(bytes); }

/* Frees this thread's vips buffers, after a job on a long-lived thread. */
static inline void scv_thread_done(void) { vips_thread_shutdown(); }
#endif
