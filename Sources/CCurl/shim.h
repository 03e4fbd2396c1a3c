#ifndef CCURL_SHIM_H
#define CCURL_SHIM_H

#include <curl/curl.h>
#include <string.h>

// curl_easy_setopt and curl_easy_getinfo are variadic, which Swift cannot call: typed wrappers.
static inline CURLcode ccurl_setopt_long(CURL *curl, CURLoption option, long value) {
    return curl_easy_setopt(curl, option, value);
}
static inline CURLcode ccurl_setopt_string(CURL *curl, CURLoption option, const char *value) {
    return curl_easy_setopt(curl, option, value);
}
static inline CURLcode ccurl_setopt_slist(CURL *curl, CURLoption option, struct curl_slist *value) {
    return curl_easy_setopt(curl, option, value);
}
static inline CURLcode ccurl_setopt_pointer(CURL *curl, CURLoption option, void *value) {
    return curl_easy_setopt(curl, option, value);
}
static inline CURLcode ccurl_getinfo_long(CURL *curl, CURLINFO info, long *value) {
    return curl_easy_getinfo(curl, info, value);
}

// The message being uploaded: read by ccurl_read, which libcurl calls for the DATA phase.
typedef struct {
    const char *data;
    size_t length;
    size_t offset;
} ccurl_upload;

static inline size_t ccurl_read(char *buffer, size_t size, size_t count, void *userdata) {
    ccurl_upload *upload = (ccurl_upload *)userdata;
    size_t room = size * count;
    size_t left = upload->length - upload->offset;
    size_t n = left < room ? left : room;
    memcpy(buffer, upload->data + upload->offset, n);
    upload->offset += n;
    return n;
}

// Sets ccurl_read as the read function over `upload` (a C function pointer Swift need not form).
static inline CURLcode ccurl_set_upload(CURL *curl, ccurl_upload *upload) {
    CURLcode code = curl_easy_setopt(curl, CURLOPT_READFUNCTION, ccurl_read);
    if (code != CURLE_OK) return code;
    code = curl_easy_setopt(curl, CURLOPT_READDATA, (void *)upload);
    if (code != CURLE_OK) return code;
    return curl_easy_setopt(curl, CURLOPT_UPLOAD, 1L);
}

// curl_global_init's flags (a macro of macros).
static const long CCURL_GLOBAL_DEFAULT = CURL_GLOBAL_DEFAULT;

// The error buffer libcurl fills with details.
static const int CCURL_ERROR_SIZE = CURL_ERROR_SIZE;

#endif
