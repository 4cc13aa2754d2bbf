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

/* ---- Device features and migration ---- */

static const char *const mig_state_names[VFIO_MIG_STATE_COUNT] = {
    [VFIO_MIG_STATE_ERROR] = "ERROR",
    [VFIO_MIG_STATE_STOP] = "STOP",
    [VFIO_MIG_STATE_RUNNING] = "RUNNING",
    [VFIO_MIG_STATE_STOP_COPY] = "STOP_COPY",
    [VFIO_MIG_STATE_RESUMING] = "RESUMING",
    [VFIO_MIG_STATE_RUNNING_P2P] = "RUNNING_P2P",
    [VFIO_MIG_STATE_PRE_COPY] = "PRE_COPY",
    [VFIO_MIG_STATE_PRE_COPY_P2P] = "PRE_COPY_P2P",
};

const char *vfio_mig_state_name(uint32_t state)
{
    return state < VFIO_MIG_STATE_COUNT ? mig_state_names[state] : "INVALID";
}

VFIOMigState vfio_mig_next_state(uint32_t cur, uint32_t target,
                                 bool pre_copy)
{
    enum { S = VFIO_MIG_STATE_STOP, R = VFIO_MIG_STATE_RUNNING,
           C = VFIO_MIG_STATE_STOP_COPY, L = VFIO_MIG_STATE_RESUMING,
           P = VFIO_MIG_STATE_PRE_COPY, E = VFIO_MIG_STATE_ERROR };
    /*
     * next[cur][target] over the five states Conduit uses (P2P is not
     * offered).  A saving state (STOP_COPY, PRE_COPY) is only ever an end
     * of a path, so e.g. PRE_COPY -> STOP goes through RUNNING.
     */
    static const uint8_t next[VFIO_MIG_STATE_COUNT][VFIO_MIG_STATE_COUNT] = {
        [S] = { [S] = S, [R] = R, [C] = C, [L] = L, [P] = R },
        [R] = { [S] = S, [R] = R, [C] = S, [L] = S, [P] = P },
        [C] = { [S] = S, [R] = S, [C] = C, [L] = S, [P] = E },
        [L] = { [S] = S, [R] = S, [C] = S, [L] = L, [P] = S },
        [P] = { [S] = R, [R] = R, [C] = C, [L] = R, [P] = P },
    };

    if (cur >= VFIO_MIG_STATE_COUNT || target >= VFIO_MIG_STATE_COUNT ||
        (!pre_copy && (cur == P || target == P))) {
        return VFIO_MIG_STATE_ERROR;
    }
    return (VFIOMigState)next[cur][target];
}

bool vfio_user_device_feature_decode(const void *payload, size_t len,
                                     size_t nfds, uint32_t *feature,
                                     uint32_t *flags, const uint8_t **data,
                                     size_t *data_len, int *err_no,
                                     Error **errp)
{
    VFIOUserDeviceFeature f;
    uint32_t ops;

    if (len < sizeof(f)) {
        return fail_with(err_no, EINVAL, errp, "DEVICE_FEATURE payload too "
                         "short (%zu)", len);
    }
    if (nfds) {
        return fail_with(err_no, EINVAL, errp, "DEVICE_FEATURE with %zu fds",
                         nfds);
    }
    memcpy(&f, payload, sizeof(f));
    if (f.argsz < sizeof(f)) {
        return fail_with(err_no, EINVAL, errp, "DEVICE_FEATURE argsz %u "
                         "invalid", f.argsz);
    }
    if (f.flags & ~VFIO_USER_FEATURE_FLAGS_KNOWN) {
        return fail_with(err_no, EINVAL, errp, "DEVICE_FEATURE flags 0x%x "
                         "invalid", f.flags);
    }
    ops = f.flags & (VFIO_DEVICE_FEATURE_GET | VFIO_DEVICE_FEATURE_SET |
                     VFIO_DEVICE_FEATURE_PROBE);
    if (!ops || (ops == (VFIO_DEVICE_FEATURE_GET | VFIO_DEVICE_FEATURE_SET))) {
        return fail_with(err_no, EINVAL, errp, "DEVICE_FEATURE needs one of "
                         "GET and SET, or PROBE (flags 0x%x)", f.flags);
    }
    *feature = f.flags & VFIO_DEVICE_FEATURE_MASK;
    *flags = f.flags;
    *data = (const uint8_t *)payload + sizeof(f);
    *data_len = len - sizeof(f);
    return true;
}

bool vfio_user_device_feature_reply_check(const void *payload, size_t len,
                                          uint32_t flags, size_t want,
                                          Error **errp)
{
    VFIOUserDeviceFeature f;

    if (len != sizeof(f) + want) {
        error_setg(errp, "vfio-user: DEVICE_FEATURE reply is %zu bytes, "
                   "expected %zu", len, sizeof(f) + want);
        return false;
    }
    memcpy(&f, payload, sizeof(f));
    if (f.flags != flags) {
        error_setg(errp, "vfio-user: DEVICE_FEATURE reply flags 0x%x do not "
                   "match the request's 0x%x", f.flags, flags);
        return false;
    }
    if (f.argsz != len) {
        error_setg(errp, "vfio-user: DEVICE_FEATURE reply argsz %u, its "
                   "length is %zu", f.argsz, len);
        return false;
    }
    return true;
}

bool vfio_user_dma_logging_start_decode(const uint8_t *data, size_t len,
                                        VFIOUserDmaLoggingControl *ctl,
                                        const VFIOUserDmaLoggingRange **ranges,
                                        int *err_no, Error **errp)
{
    VFIOUserDmaLoggingControl c;
    const VFIOUserDmaLoggingRange *r;

    if (len < sizeof(c)) {
        return fail_with(err_no, EINVAL, errp, "DMA_LOGGING_START data too "
                         "short (%zu)", len);
    }
    memcpy(&c, data, sizeof(c));
    if (!is_power_of_2(c.page_size) || c.page_size < 4096 ||
        c.page_size > (1ull << 30)) {
        return fail_with(err_no, EINVAL, errp, "DMA_LOGGING_START page size "
                         "0x%" PRIx64 " invalid", c.page_size);
    }
    if (c.num_ranges > VFIO_USER_LIMIT_LOG_RANGES) {
        return fail_with(err_no, E2BIG, errp, "DMA_LOGGING_START of %u "
                         "ranges (at most %u)", c.num_ranges,
                         VFIO_USER_LIMIT_LOG_RANGES);
    }
    if (len != sizeof(c) + (size_t)c.num_ranges * sizeof(*r)) {
        return fail_with(err_no, EINVAL, errp, "DMA_LOGGING_START data is "
                         "%zu bytes for %u ranges", len, c.num_ranges);
    }
    r = (const VFIOUserDmaLoggingRange *)(data + sizeof(c));
    for (uint32_t i = 0; i < c.num_ranges; i++) {
        VFIOUserDmaLoggingRange a;

        memcpy(&a, &r[i], sizeof(a));
        if (!a.length || range_wraps(a.iova, a.length) ||
            (a.iova | a.length) & (c.page_size - 1)) {
            return fail_with(err_no, EINVAL, errp, "DMA_LOGGING_START range "
                             "0x%" PRIx64 "+0x%" PRIx64 " invalid", a.iova,
                             a.length);
        }
        for (uint32_t j = 0; j < i; j++) {
            VFIOUserDmaLoggingRange b;

            memcpy(&b, &r[j], sizeof(b));
            if (vfio_user_ranges_overlap(a.iova, a.length, b.iova,
                                         b.length)) {
                return fail_with(err_no, EINVAL, errp, "DMA_LOGGING_START "
                                 "ranges overlap");
            }
        }
    }
    *ctl = c;
    *ranges = r;
    return true;
}

bool vfio_user_dma_logging_report_decode(const uint8_t *data, size_t len,
                                         uint64_t max_bitmap,
                                         VFIOUserDmaLoggingReport *rep,
                                         size_t *bitmap_len, int *err_no,
                                         Error **errp)
{
    VFIOUserDmaLoggingReport r;
    uint64_t bm;

    if (len != sizeof(r)) {
        return fail_with(err_no, EINVAL, errp, "DMA_LOGGING_REPORT data is "
                         "%zu bytes, expected %zu", len, sizeof(r));
    }
    memcpy(&r, data, sizeof(r));
    if (!is_power_of_2(r.page_size) || r.page_size < 512) {
        return fail_with(err_no, EINVAL, errp, "DMA_LOGGING_REPORT page size "
                         "0x%" PRIx64 " invalid", r.page_size);
    }
    if (!r.length || r.length % r.page_size || r.iova % r.page_size ||
        range_wraps(r.iova, r.length)) {
        return fail_with(err_no, EINVAL, errp, "DMA_LOGGING_REPORT range "
                         "0x%" PRIx64 "+0x%" PRIx64 " invalid", r.iova,
                         r.length);
    }
    bm = vfio_user_dirty_bitmap_size(r.length, r.page_size);
    if (bm > max_bitmap) {
        return fail_with(err_no, E2BIG, errp, "DMA_LOGGING_REPORT bitmap of "
                         "%" PRIu64 " bytes exceeds %" PRIu64, bm,
                         max_bitmap);
    }
    *rep = r;
    *bitmap_len = bm;
    return true;
}

bool vfio_user_mig_data_decode(const void *payload, size_t len,
                               bool is_write, uint64_t max_xfer,
                               size_t nfds, const VFIOUserMigData **out,
                               int *err_no, Error **errp)
{
    const VFIOUserMigData *m = payload;
    const char *what = is_write ? "MIG_DATA_WRITE" : "MIG_DATA_READ";
    size_t want;

    if (len < sizeof(*m)) {
        return fail_with(err_no, EINVAL, errp, "%s payload too short (%zu)",
                         what, len);
    }
    if (nfds) {
        return fail_with(err_no, EINVAL, errp, "%s with %zu fds", what, nfds);
    }
    if (!m->size || m->size > max_xfer) {
        return fail_with(err_no, m->size ? E2BIG : EINVAL, errp, "%s of %u "
                         "bytes (1 to %" PRIu64 " allowed)", what, m->size,
                         max_xfer);
    }
    want = sizeof(*m) + (is_write ? m->size : 0);
    if (len != want) {
        return fail_with(err_no, EINVAL, errp, "%s payload is %zu bytes, "
                         "expected %zu", what, len, want);
    }
    if (!is_write && m->argsz < sizeof(*m)) {
        return fail_with(err_no, EINVAL, errp, "%s argsz %u invalid", what,
                         m->argsz);
    }
    *out = m;
    return true;
}

bool vfio_user_mig_data_read_reply_check(const void *payload, size_t len,
                                         uint32_t asked, Error **errp)
{
    VFIOUserMigData m;

    if (len < sizeof(m)) {
        error_setg(errp, "vfio-user: MIG_DATA_READ reply too short (%zu)",
                   len);
        return false;
    }
    memcpy(&m, payload, sizeof(m));
    /*
     * argsz and size say how much is data; libvfio-user sends the whole
     * buffer asked for behind it, which is tolerated (never more).
     */
    if (m.size > asked || m.argsz != sizeof(m) + (uint64_t)m.size ||
        len < m.argsz || len > sizeof(m) + (size_t)asked) {
        error_setg(errp, "vfio-user: MIG_DATA_READ reply of %zu bytes "
                   "(argsz %u, size %u) for a read of %u", len, m.argsz,
                   m.size, asked);
        return false;
    }
    return true;
}
