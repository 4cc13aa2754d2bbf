/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * vfio-user message codecs shared by the client and the server library.
 *
 * Everything here treats its input as hostile: a validator either proves
 * that every later access stays inside the buffer it was given or fails
 * with a message (and the errno to put in an error reply).
 */
#include "qemu/osdep.h"
#include <json-glib/json-glib.h>
#include "qapi/error.h"
#include "vfio-user/protocol.h"

static const char *const command_names[VFIO_USER_MAX_COMMAND] = {
    [VFIO_USER_VERSION] = "VERSION",
    [VFIO_USER_DMA_MAP] = "DMA_MAP",
    [VFIO_USER_DMA_UNMAP] = "DMA_UNMAP",
    [VFIO_USER_DEVICE_GET_INFO] = "DEVICE_GET_INFO",
    [VFIO_USER_DEVICE_GET_REGION_INFO] = "DEVICE_GET_REGION_INFO",
    [VFIO_USER_DEVICE_GET_REGION_IO_FDS] = "DEVICE_GET_REGION_IO_FDS",
    [VFIO_USER_DEVICE_GET_IRQ_INFO] = "DEVICE_GET_IRQ_INFO",
    [VFIO_USER_DEVICE_SET_IRQS] = "DEVICE_SET_IRQS",
    [VFIO_USER_REGION_READ] = "REGION_READ",
    [VFIO_USER_REGION_WRITE] = "REGION_WRITE",
    [VFIO_USER_DMA_READ] = "DMA_READ",
    [VFIO_USER_DMA_WRITE] = "DMA_WRITE",
    [VFIO_USER_DEVICE_RESET] = "DEVICE_RESET",
    [VFIO_USER_REGION_WRITE_MULTI] = "REGION_WRITE_MULTI",
    [VFIO_USER_DEVICE_FEATURE] = "DEVICE_FEATURE",
    [VFIO_USER_MIG_DATA_READ] = "MIG_DATA_READ",
    [VFIO_USER_MIG_DATA_WRITE] = "MIG_DATA_WRITE",
};

const char *vfio_user_command_name(uint16_t command)
{
    if (command < VFIO_USER_MAX_COMMAND && command_names[command]) {
        return command_names[command];
    }
    return "UNKNOWN";
}

void vfio_user_hdr_init(VFIOUserHdr *hdr, uint16_t id, uint16_t command,
                        uint32_t size, uint32_t flags)
{
    hdr->id = id;
    hdr->command = command;
    hdr->size = size;
    hdr->flags = flags;
    hdr->error_reply = 0;
}

bool vfio_user_hdr_validate(const VFIOUserHdr *hdr, size_t max_payload,
                            Error **errp)
{
    uint32_t type = hdr->flags & VFIO_USER_F_TYPE_MASK;

    if (hdr->size < sizeof(*hdr)) {
        error_setg(errp, "vfio-user: message size %u is smaller than the "
                   "header", hdr->size);
        return false;
    }
    if (hdr->size - sizeof(*hdr) > max_payload) {
        error_setg(errp, "vfio-user: message size %u exceeds the limit of "
                   "%zu", hdr->size, max_payload + sizeof(*hdr));
        return false;
    }
    if (type != VFIO_USER_F_TYPE_COMMAND && type != VFIO_USER_F_TYPE_REPLY) {
        error_setg(errp, "vfio-user: invalid message type %u", type);
        return false;
    }
    if (hdr->flags & ~VFIO_USER_F_KNOWN) {
        error_setg(errp, "vfio-user: unknown message flags 0x%x",
                   hdr->flags & ~VFIO_USER_F_KNOWN);
        return false;
    }
    return true;
}

/* ---- VERSION ---- */

void vfio_user_caps_init_default(VFIOUserCaps *caps)
{
    caps->max_msg_fds = VFIO_USER_DEF_MAX_FDS;
    caps->max_data_xfer_size = VFIO_USER_DEF_MAX_DATA_XFER;
    caps->max_dma_maps = VFIO_USER_DEF_MAX_DMA_MAPS;
    caps->pgsizes = VFIO_USER_DEF_PGSIZES;
}

char *vfio_user_caps_to_json(const VFIOUserCaps *caps)
{
    g_autoptr(JsonBuilder) b = json_builder_new();
    g_autoptr(JsonGenerator) gen = json_generator_new();
    g_autoptr(JsonNode) root = NULL;

    json_builder_begin_object(b);
    json_builder_set_member_name(b, "capabilities");
    json_builder_begin_object(b);
    json_builder_set_member_name(b, "max_msg_fds");
    json_builder_add_int_value(b, caps->max_msg_fds);
    json_builder_set_member_name(b, "max_data_xfer_size");
    json_builder_add_int_value(b, caps->max_data_xfer_size);
    json_builder_set_member_name(b, "max_dma_maps");
    json_builder_add_int_value(b, caps->max_dma_maps);
    json_builder_set_member_name(b, "pgsizes");
    json_builder_add_int_value(b, caps->pgsizes);
    json_builder_end_object(b);
    json_builder_end_object(b);
    root = json_builder_get_root(b);
    json_generator_set_root(gen, root);
    return json_generator_to_data(gen, NULL);
}

void *vfio_user_version_build(uint16_t major, uint16_t minor,
                              const VFIOUserCaps *caps, size_t *len)
{
    g_autofree char *json = vfio_user_caps_to_json(caps);
    size_t jlen = strlen(json) + 1;
    VFIOUserVersion *v = g_malloc0(sizeof(*v) + jlen);

    v->major = major;
    v->minor = minor;
    memcpy(v->capabilities, json, jlen);
    *len = sizeof(*v) + jlen;
    return v;
}

/*
 * Reads an optional positive integer member; absent leaves *val alone.
 * Values above limit are clamped: a peer may support more than we care to.
 */
static bool caps_get_uint(JsonObject *obj, const char *name, uint64_t limit,
                          uint64_t *val, Error **errp)
{
    JsonNode *node = json_object_get_member(obj, name);
    gint64 v;

    if (!node) {
        return true;
    }
    if (!JSON_NODE_HOLDS_VALUE(node) ||
        json_node_get_value_type(node) != G_TYPE_INT64) {
        error_setg(errp, "vfio-user: capability '%s' is not an integer",
                   name);
        return false;
    }
    v = json_node_get_int(node);
    if (v <= 0) {
        error_setg(errp, "vfio-user: capability '%s' must be positive, "
                   "got %" PRId64, name, (int64_t)v);
        return false;
    }
    *val = MIN((uint64_t)v, limit);
    return true;
}

bool vfio_user_version_parse(const void *payload, size_t len,
                             uint16_t *major, uint16_t *minor,
                             VFIOUserCaps *caps, Error **errp)
{
    const VFIOUserVersion *v = payload;
    g_autoptr(JsonParser) parser = NULL;
    g_autoptr(GError) gerr = NULL;
    JsonNode *root;
    JsonObject *obj;
    JsonNode *capnode;
    uint64_t fds;
    const char *json;
    size_t jlen;

    vfio_user_caps_init_default(caps);
    if (len < sizeof(*v)) {
        error_setg(errp, "vfio-user: VERSION payload too short (%zu bytes)",
                   len);
        return false;
    }
    *major = v->major;
    *minor = v->minor;
    if (len == sizeof(*v)) {
        return true;
    }
    json = v->capabilities;
    jlen = len - sizeof(*v);
    if (json[jlen - 1] != '\0' || strlen(json) != jlen - 1) {
        error_setg(errp, "vfio-user: VERSION data is not a single "
                   "NUL-terminated string");
        return false;
    }
    if (jlen - 1 > VFIO_USER_LIMIT_VERSION_JSON) {
        error_setg(errp, "vfio-user: VERSION data too long (%zu bytes)",
                   jlen - 1);
        return false;
    }
    if (jlen == 1) {
        return true;
    }
    parser = json_parser_new();
    if (!json_parser_load_from_data(parser, json, jlen - 1, &gerr)) {
        error_setg(errp, "vfio-user: VERSION data is not JSON: %s",
                   gerr->message);
        return false;
    }
    root = json_parser_get_root(parser);
    if (!root || !JSON_NODE_HOLDS_OBJECT(root)) {
        error_setg(errp, "vfio-user: VERSION data is not a JSON object");
        return false;
    }
    obj = json_node_get_object(root);
    capnode = json_object_get_member(obj, "capabilities");
    if (!capnode) {
        return true;
    }
    if (!JSON_NODE_HOLDS_OBJECT(capnode)) {
        error_setg(errp, "vfio-user: 'capabilities' is not an object");
        return false;
    }
    obj = json_node_get_object(capnode);
    fds = caps->max_msg_fds;
    if (!caps_get_uint(obj, "max_msg_fds", VFIO_USER_LIMIT_MAX_FDS, &fds,
                       errp) ||
        !caps_get_uint(obj, "max_data_xfer_size",
                       VFIO_USER_LIMIT_MAX_DATA_XFER,
                       &caps->max_data_xfer_size, errp) ||
        !caps_get_uint(obj, "max_dma_maps", UINT32_MAX,
                       &caps->max_dma_maps, errp) ||
        !caps_get_uint(obj, "pgsizes", UINT64_MAX, &caps->pgsizes, errp)) {
        return false;
    }
    caps->max_msg_fds = fds;
    return true;
}

uint64_t vfio_user_pgsizes_negotiate(uint64_t ours, uint64_t peer)
{
    uint64_t granule;

    if (!ours || !peer) {
        return 0;
    }
    granule = MAX(ours & -ours, peer & -peer);
    return granule | (ours & peer & ~(granule - 1));
}

bool vfio_user_caps_negotiate(const VFIOUserCaps *ours,
                              const VFIOUserCaps *peer,
                              VFIOUserCaps *out, Error **errp)
{
    VFIOUserCaps res = {
        .max_msg_fds = MIN(ours->max_msg_fds, peer->max_msg_fds),
        .max_data_xfer_size = MIN(ours->max_data_xfer_size,
                                  peer->max_data_xfer_size),
        .max_dma_maps = MIN(ours->max_dma_maps, peer->max_dma_maps),
        .pgsizes = vfio_user_pgsizes_negotiate(ours->pgsizes,
                                               peer->pgsizes),
    };

    if (!res.pgsizes) {
        error_setg(errp, "vfio-user: no common DMA page size (ours 0x%"
                   PRIx64 ", peer 0x%" PRIx64 ")", ours->pgsizes,
                   peer->pgsizes);
        return false;
    }
    *out = res;
    return true;
}

/* ---- DMA map/unmap ---- */

static inline bool range_wraps(uint64_t start, uint64_t size)
{
    return size && size - 1 > UINT64_MAX - start;
}

bool vfio_user_ranges_overlap(uint64_t a, uint64_t asize,
                              uint64_t b, uint64_t bsize)
{
    uint64_t alast = a + asize - 1, blast = b + bsize - 1;

    return asize && bsize && a <= blast && b <= alast;
}

static bool fail_with(int *err_no, int e, Error **errp, const char *fmt, ...)
    QEMU_PRINTF(4, 5);

static bool fail_with(int *err_no, int e, Error **errp, const char *fmt, ...)
{
    va_list ap;
    g_autofree char *msg = NULL;

    va_start(ap, fmt);
    msg = g_strdup_vprintf(fmt, ap);
    va_end(ap);
    error_setg(errp, "vfio-user: %s", msg);
    if (err_no) {
        *err_no = e;
    }
    return false;
}

bool vfio_user_dma_map_decode(const void *payload, size_t len, size_t nfds,
                              VFIOUserDMAMap *out, int *err_no, Error **errp)
{
    VFIOUserDMAMap m;

    if (len != sizeof(m)) {
        return fail_with(err_no, EINVAL, errp,
                         "DMA_MAP payload is %zu bytes, expected %zu",
                         len, sizeof(m));
    }
    memcpy(&m, payload, sizeof(m));
    if (m.argsz != sizeof(m)) {
        return fail_with(err_no, EINVAL, errp, "DMA_MAP argsz %u invalid",
                         m.argsz);
    }
    if (m.flags & ~(VFIO_USER_DMA_MAP_FLAG_READ |
                    VFIO_USER_DMA_MAP_FLAG_WRITE)) {
        return fail_with(err_no, EINVAL, errp, "DMA_MAP flags 0x%x invalid",
                         m.flags);
    }
    if (!m.size) {
        return fail_with(err_no, EINVAL, errp, "DMA_MAP of size 0");
    }
    if (range_wraps(m.address, m.size)) {
        return fail_with(err_no, EINVAL, errp, "DMA_MAP range 0x%" PRIx64
                         "+0x%" PRIx64 " wraps around", m.address, m.size);
    }
    if (nfds > 1) {
        return fail_with(err_no, EINVAL, errp, "DMA_MAP with %zu fds", nfds);
    }
    if (nfds == 1 && (range_wraps(m.offset, m.size) ||
                      m.offset + m.size - 1 > (uint64_t)INT64_MAX)) {
        return fail_with(err_no, EINVAL, errp, "DMA_MAP file range 0x%"
                         PRIx64 "+0x%" PRIx64 " out of range",
                         m.offset, m.size);
    }
    *out = m;
    return true;
}

bool vfio_user_dma_unmap_decode(const void *payload, size_t len, size_t nfds,
                                VFIOUserDMAUnmap *out, int *err_no,
                                Error **errp)
{
    VFIOUserDMAUnmap u;

    if (len != sizeof(u)) {
        return fail_with(err_no, EINVAL, errp,
                         "DMA_UNMAP payload is %zu bytes, expected %zu",
                         len, sizeof(u));
    }
    memcpy(&u, payload, sizeof(u));
    if (u.argsz < sizeof(u)) {
        return fail_with(err_no, EINVAL, errp, "DMA_UNMAP argsz %u invalid",
                         u.argsz);
    }
    if (u.flags & VFIO_DMA_UNMAP_FLAG_GET_DIRTY_BITMAP) {
        return fail_with(err_no, ENOTSUP, errp,
                         "DMA_UNMAP dirty bitmaps are not supported");
    }
    if (u.flags & ~VFIO_DMA_UNMAP_FLAG_ALL) {
        return fail_with(err_no, EINVAL, errp, "DMA_UNMAP flags 0x%x invalid",
                         u.flags);
    }
    if (nfds) {
        return fail_with(err_no, EINVAL, errp, "DMA_UNMAP with %zu fds",
                         nfds);
    }
    if (u.flags & VFIO_DMA_UNMAP_FLAG_ALL) {
        if (u.address || u.size) {
            return fail_with(err_no, EINVAL, errp,
                             "DMA_UNMAP ALL with a non-zero range");
        }
    } else if (!u.size || range_wraps(u.address, u.size)) {
        return fail_with(err_no, EINVAL, errp, "DMA_UNMAP range 0x%" PRIx64
                         "+0x%" PRIx64 " invalid", u.address, u.size);
    }
    *out = u;
    return true;
}

/* ---- Region and DMA read/write ---- */

static bool rw_decode(const char *what, const void *payload, size_t len,
                      bool is_write, uint64_t count, uint64_t max_xfer,
                      size_t nfds, int *err_no, Error **errp)
{
    size_t want;

    if (nfds) {
        return fail_with(err_no, EINVAL, errp, "%s with %zu fds", what, nfds);
    }
    if (!count) {
        return fail_with(err_no, EINVAL, errp, "%s of 0 bytes", what);
    }
    if (count > max_xfer) {
        return fail_with(err_no, E2BIG, errp, "%s of %" PRIu64 " bytes "
                         "exceeds max_data_xfer_size %" PRIu64, what, count,
                         max_xfer);
    }
    want = 16 + (is_write ? count : 0);
    if (len != want) {
        return fail_with(err_no, EINVAL, errp, "%s payload is %zu bytes, "
                         "expected %zu", what, len, want);
    }
    return true;
}

bool vfio_user_region_rw_decode(const void *payload, size_t len,
                                bool is_write, uint64_t max_xfer,
                                size_t nfds, const VFIOUserRegionRW **out,
                                int *err_no, Error **errp)
{
    const VFIOUserRegionRW *rw = payload;
    const char *what = is_write ? "REGION_WRITE" : "REGION_READ";

    if (len < sizeof(*rw)) {
        return fail_with(err_no, EINVAL, errp, "%s payload too short (%zu)",
                         what, len);
    }
    if (!rw_decode(what, payload, len, is_write, rw->count, max_xfer, nfds,
                   err_no, errp)) {
        return false;
    }
    *out = rw;
    return true;
}

bool vfio_user_region_rw_reply_check(const void *payload, size_t len,
                                     bool is_write, uint32_t region,
                                     uint64_t offset, uint32_t count,
                                     Error **errp)
{
    const VFIOUserRegionRW *rw = payload;
    size_t want = sizeof(*rw) + (is_write ? 0 : count);

    if (len != want) {
        error_setg(errp, "vfio-user: region %s reply is %zu bytes, expected "
                   "%zu", is_write ? "write" : "read", len, want);
        return false;
    }
    if (rw->region != region || rw->offset != offset || rw->count != count) {
        error_setg(errp, "vfio-user: region reply does not match the "
                   "request");
        return false;
    }
    return true;
}

bool vfio_user_dma_rw_decode(const void *payload, size_t len, bool is_write,
                             uint64_t max_xfer, size_t nfds,
                             const VFIOUserDMARW **out, int *err_no,
                             Error **errp)
{
    const VFIOUserDMARW *rw = payload;
    const char *what = is_write ? "DMA_WRITE" : "DMA_READ";

    if (len < sizeof(*rw)) {
        return fail_with(err_no, EINVAL, errp, "%s payload too short (%zu)",
                         what, len);
    }
    if (range_wraps(rw->address, rw->count)) {
        return fail_with(err_no, EINVAL, errp, "%s range wraps around", what);
    }
    if (!rw_decode(what, payload, len, is_write, rw->count, max_xfer, nfds,
                   err_no, errp)) {
        return false;
    }
    *out = rw;
    return true;
}

bool vfio_user_dma_rw_reply_check(const void *payload, size_t len,
                                  bool is_write, uint64_t address,
                                  uint64_t count, Error **errp)
{
    const VFIOUserDMARW *rw = payload;
    uint64_t want = sizeof(*rw) + (is_write ? 0 : count);

    /* want wraps for a count near 2^64: never accept less than the header. */
    if (len < sizeof(*rw) || len != want) {
        error_setg(errp, "vfio-user: DMA %s reply is %zu bytes, expected %"
                   PRIu64, is_write ? "write" : "read", len, want);
        return false;
    }
    if (rw->address != address || rw->count != count) {
        error_setg(errp, "vfio-user: DMA reply does not match the request");
        return false;
    }
    return true;
}

/* ---- SET_IRQS ---- */

bool vfio_user_irq_set_decode(const void *payload, size_t len, size_t nfds,
                              uint32_t index_count,
                              const struct vfio_irq_set **out, int *err_no,
                              Error **errp)
{
    const struct vfio_irq_set *s = payload;
    uint32_t data, action;

    if (len < VFIO_USER_IRQ_SET_SIZE) {
        return fail_with(err_no, EINVAL, errp, "SET_IRQS payload too short "
                         "(%zu)", len);
    }
    if (s->argsz != len) {
        return fail_with(err_no, EINVAL, errp, "SET_IRQS argsz %u does not "
                         "match the payload size %zu", s->argsz, len);
    }
    data = s->flags & VFIO_IRQ_SET_DATA_TYPE_MASK;
    action = s->flags & VFIO_IRQ_SET_ACTION_TYPE_MASK;
    if (!is_power_of_2(data) || !is_power_of_2(action) ||
        (s->flags & ~(VFIO_IRQ_SET_DATA_TYPE_MASK |
                      VFIO_IRQ_SET_ACTION_TYPE_MASK))) {
        return fail_with(err_no, EINVAL, errp, "SET_IRQS flags 0x%x invalid",
                         s->flags);
    }
    if (s->count == 0) {
        if (data != VFIO_IRQ_SET_DATA_NONE ||
            action != VFIO_IRQ_SET_ACTION_TRIGGER || s->start != 0) {
            return fail_with(err_no, EINVAL, errp, "SET_IRQS count 0 is only "
                             "valid to disable the whole index");
        }
    } else if ((uint64_t)s->start + s->count > index_count) {
        return fail_with(err_no, EINVAL, errp, "SET_IRQS vectors %u+%u "
                         "exceed the index's %u", s->start, s->count,
                         index_count);
    }
    switch (data) {
    case VFIO_IRQ_SET_DATA_NONE:
        if (len != VFIO_USER_IRQ_SET_SIZE || nfds) {
            return fail_with(err_no, EINVAL, errp, "SET_IRQS DATA_NONE with "
                             "data or fds");
        }
        break;
    case VFIO_IRQ_SET_DATA_BOOL:
        if (len != VFIO_USER_IRQ_SET_SIZE + (size_t)s->count || nfds) {
            return fail_with(err_no, EINVAL, errp, "SET_IRQS DATA_BOOL needs "
                             "exactly %u bytes and no fds", s->count);
        }
        break;
    case VFIO_IRQ_SET_DATA_EVENTFD:
        /* An fd array in the payload (kernel style) is tolerated, unused. */
        if (len != VFIO_USER_IRQ_SET_SIZE &&
            len != VFIO_USER_IRQ_SET_SIZE + (size_t)s->count * 4) {
            return fail_with(err_no, EINVAL, errp, "SET_IRQS DATA_EVENTFD "
                             "payload size %zu invalid", len);
        }
        if (nfds != 0 && nfds != s->count) {
            return fail_with(err_no, EINVAL, errp, "SET_IRQS got %zu fds for "
                             "%u vectors", nfds, s->count);
        }
        break;
    }
    *out = s;
    return true;
}
