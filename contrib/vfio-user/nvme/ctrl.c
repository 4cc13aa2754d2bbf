/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * vfio-user-nvme: controller registers, queues, doorbells and completions.
 *
 * Locking: n->lock protects all controller state.  The libvfu thread takes
 * it for register and trapped doorbell accesses, the poller thread for
 * register and doorbell scans and backend completions.
 *
 * Shared registers: BAR0 is one memfd the client may map whole, as with
 * Linux's vfio-pci, so the register page is guest memory too.  NvmeCtrl's
 * fields stay the truth; every change is published into the page, and
 * reg_image[] remembers what was published.  A scan (each poller pass and
 * each trapped register access) compares the page with reg_image[]: a
 * differing dword is a guest store, handled as a trapped 32-bit write of
 * that value would be, after which the truth is published again (which
 * also repairs read-only fields a guest scribbled over).  Memory order:
 * CC is loaded first with acquire and handled last, so that AQA/ASQ/ACQ
 * stored before CC.EN are seen with it; publishing uses a release
 * compare-and-swap against the previously published value, so a guest
 * store racing with it is never overwritten but found by the next scan.
 * A guest store of the value already there is invisible, which is
 * harmless for CC, AQA, ASQ and ACQ; INTMS/INTMC, whose writes set or clear
 * bits, are shown as 0 so that no meaningful write is invisible.
 *
 * Reset after a fatal error.  A host recovering from CSTS.CFS writes CC with
 * EN=0, AQA/ASQ/ACQ, then CC with EN=1; if RDY is already 0 it need not
 * wait in between, and a scan that runs only after the last store would see
 * CC unchanged and lose the reset.  So, while CFS is set, the page shows CC
 * with NVME_CC_FATAL_MARK (a reserved bit) added: any CC store the host
 * makes differs from it.  A scan that finds a new CC value with EN=1 while
 * CFS is set, and no shutdown request, knows the host disabled the
 * controller in between: it performs that disable before looking at the
 * other registers, so the admin queue registers are taken and the enable
 * happens, exactly as if every store had been seen.  RDY follows the spec:
 * a fatal error sets CFS and leaves RDY alone, so a host that does wait for
 * RDY=0 after clearing EN is seen doing so by the next pass.
 */
#include "qemu/osdep.h"
#include "qemu/error-report.h"
#include "qapi/error.h"
#include "nvme.h"
#include "trace.h"

static inline uint32_t nvme_db_load(NvmeCtrl *n, unsigned idx)
{
    uint32_t *db = (uint32_t *)(n->bar + NVME_DB_BASE) + idx;

    /* Acquire: queue entries written before the doorbell are visible. */
    return le32toh(__atomic_load_n(db, __ATOMIC_ACQUIRE));
}

/*
 * How the dispatch thread (register and doorbell messages, DMA_UNMAP's
 * drain, resets) takes n->lock.  The poller may hold it while it waits for
 * the client to answer a DMA_READ/WRITE, and that answer can only arrive
 * through the dispatch thread: so it waits in short slices and serves
 * replies in between (n->lock_wait), and no client message ever waits for
 * the client while the lock is held on its behalf.
 */
static void nvme_lock_serving(NvmeCtrl *n)
{
    if (!n->lock_wait) {
        pthread_mutex_lock(&n->lock);
        return;
    }
    for (;;) {
        struct timespec ts;

        clock_gettime(CLOCK_REALTIME, &ts);
        ts.tv_nsec += 1000 * 1000;
        if (ts.tv_nsec >= 1000 * 1000 * 1000) {
            ts.tv_sec++;
            ts.tv_nsec -= 1000 * 1000 * 1000;
        }
        if (pthread_mutex_timedlock(&n->lock, &ts) == 0) {
            return;
        }
        n->lock_wait(n->lock_wait_opaque);
    }
}

static inline void nvme_db_store(NvmeCtrl *n, unsigned idx, uint32_t val)
{
    uint32_t *db = (uint32_t *)(n->bar + NVME_DB_BASE) + idx;

    __atomic_store_n(db, htole32(val), __ATOMIC_RELEASE);
}

static uint32_t nvme_reg_read32(NvmeCtrl *n, uint64_t offset);
static void nvme_reg_write32(NvmeCtrl *n, uint64_t offset, uint32_t val);

static inline uint32_t *nvme_reg_slot(NvmeCtrl *n, unsigned idx)
{
    return (uint32_t *)n->bar + idx;
}

/*
 * The shared value of a register dword.  INTMS/INTMC show 0: their writes
 * set or clear the bits written, so a guest clearing the mask it reads
 * would store the very value it read and go unseen; with 0 shown, every
 * write that does something differs.  Their mask reads right when trapped.
 */
static uint32_t nvme_reg_shared_val(NvmeCtrl *n, unsigned idx)
{
    if (idx == NVME_REG_INTMS / 4 || idx == NVME_REG_INTMC / 4) {
        return 0;
    }
    if (idx == NVME_REG_CC / 4 && (n->csts & NVME_CSTS_CFS)) {
        return htole32(n->cc | NVME_CC_FATAL_MARK);
    }
    return htole32(nvme_reg_read32(n, idx * 4));
}

/* Publishes one register dword into the shared page (see the top). */
static void nvme_reg_publish(NvmeCtrl *n, unsigned idx)
{
    uint32_t val = nvme_reg_shared_val(n, idx);
    uint32_t expected = n->reg_image[idx];

    if (val == expected) {
        return;
    }
    /* On failure the guest stored meanwhile: the next scan handles it. */
    __atomic_compare_exchange_n(nvme_reg_slot(n, idx), &expected, val, false,
                                __ATOMIC_RELEASE, __ATOMIC_RELAXED);
    n->reg_image[idx] = val;
}

static void nvme_regs_publish(NvmeCtrl *n)
{
    for (unsigned i = 0; i < NVME_REG_SHARED_END / 4; i++) {
        nvme_reg_publish(n, i);
    }
}

/*
 * Plain stores, image in step: for a buffer nobody maps yet, or after a
 * reset, which overrides whatever the guest stored.
 */
static void nvme_regs_publish_fresh(NvmeCtrl *n)
{
    for (unsigned i = 0; i < NVME_REG_SHARED_END / 4; i++) {
        n->reg_image[i] = nvme_reg_shared_val(n, i);
        __atomic_store_n(nvme_reg_slot(n, i), n->reg_image[i],
                         __ATOMIC_RELEASE);
    }
}

static bool nvme_reg_scan_one(NvmeCtrl *n, unsigned idx, uint32_t seen)
{
    if (seen == n->reg_image[idx]) {
        return false;
    }
    /* Consumed: publishing compares against what the guest left. */
    n->reg_image[idx] = seen;
    trace_nvme_reg_mapped_write(idx * 4, le32toh(seen));
    nvme_reg_write32(n, idx * 4, le32toh(seen));
    return true;
}

/*
 * Acts on guest stores made through a mapping of the register page; true
 * if there were any.  Called with n->lock held.
 */
static bool nvme_regs_scan(NvmeCtrl *n)
{
    const unsigned cc = NVME_REG_CC / 4;
    uint32_t seen_cc = __atomic_load_n(nvme_reg_slot(n, cc), __ATOMIC_ACQUIRE);
    uint32_t new_cc = le32toh(seen_cc);
    /*
     * A disable goes before the other registers, an enable after them:
     * a host resetting after CFS need not wait for RDY, so one pass can
     * find its EN=0 store together with the AQA/ASQ/ACQ stores that
     * followed it, and those are ignored while EN is still 1.
     */
    bool disable = (n->cc & NVME_CC_EN) && !(new_cc & NVME_CC_EN);
    bool changed = false;

    /* A reset after CFS whose EN=0 store we did not see (see the top). */
    if (seen_cc != n->reg_image[cc] && (n->csts & NVME_CSTS_CFS) &&
        (n->cc & NVME_CC_EN) && (new_cc & NVME_CC_EN) &&
        !NVME_CC_SHN(new_cc)) {
        trace_nvme_reset_after_fatal(n->cc, new_cc);
        nvme_reg_write32(n, NVME_REG_CC, n->cc & ~NVME_CC_EN);
        changed = true;
    }
    if (disable) {
        changed |= nvme_reg_scan_one(n, cc, seen_cc);
    }
    for (unsigned i = 0; i < NVME_REG_SHARED_END / 4; i++) {
        if (i != cc) {
            changed |= nvme_reg_scan_one(n, i,
                                         __atomic_load_n(nvme_reg_slot(n, i),
                                                         __ATOMIC_RELAXED));
        }
    }
    if (!disable) {
        changed |= nvme_reg_scan_one(n, cc, seen_cc);
    }
    if (changed) {
        nvme_regs_publish(n);
    }
    return changed;
}

/*
 * CSTS changes under n->lock, but the poller peeks at RDY without it, so
 * every store is atomic.  A guest polling CSTS through the mapping sees the
 * change at once.
 */
static void nvme_csts_update(NvmeCtrl *n, uint32_t clear, uint32_t set)
{
    uint32_t old = n->csts;

    __atomic_store_n(&n->csts, (old & ~clear) | set, __ATOMIC_RELAXED);
    /*
     * CC's shared value carries the CFS mark, and goes out first: a host
     * that sees CFS and resets at once must find CC marked, or its final
     * CC store (EN=1, the value CC had) could be overwritten by this very
     * publish and the reset lost (CSTS stuck at CFS; seen under qemu-user).
     */
    nvme_reg_publish(n, NVME_REG_CC / 4);
    nvme_reg_publish(n, NVME_REG_CSTS / 4);
    if ((set & NVME_CSTS_CFS) && !(old & NVME_CSTS_CFS)) {
        n->irq_notify(n->irq_opaque, NVME_IRQ_FATAL);
    }
}

bool nvme_ctrl_enabled(NvmeCtrl *n)
{
    /* The poller asks without the lock: a stale answer costs one pass. */
    return (__atomic_load_n(&n->csts, __ATOMIC_RELAXED) & NVME_CSTS_RDY) != 0;
}

/* ---- Queues ---- */

/* Passes look at qids below this bound only: usually a handful. */
static void nvme_update_qid_bound(NvmeCtrl *n)
{
    unsigned bound = 0;

    for (unsigned i = 0; i <= n->max_ioqs; i++) {
        if (n->sq[i].valid || n->cq[i].valid) {
            bound = i + 1;
        }
    }
    n->qid_bound = bound;
}

uint16_t nvme_create_cq(NvmeCtrl *n, uint16_t qid, uint64_t base,
                        uint16_t size, uint16_t vector, bool ien)
{
    NvmeCQ *cq;

    if (qid > n->max_ioqs || n->cq[qid].valid) {
        return NVME_INVALID_QID | NVME_DNR;
    }
    if (size < 2 || size > NVME_MQES + 1) {
        return NVME_MAX_QSIZE_EXCEEDED | NVME_DNR;
    }
    if (vector >= n->nvectors) {
        return NVME_INVALID_VECTOR | NVME_DNR;
    }
    if (base & (n->page_size - 1)) {
        return NVME_INVALID_PRP_OFFSET | NVME_DNR;
    }
    cq = &n->cq[qid];
    *cq = (NvmeCQ) {
        .valid = true, .qid = qid, .base = base, .size = size,
        .vector = vector, .ien = ien, .phase = true,
    };
    nvme_db_store(n, 2 * qid + 1, 0);
    nvme_update_qid_bound(n);
    trace_nvme_create_cq(qid, base, size, vector, ien);
    return NVME_SUCCESS;
}

uint16_t nvme_create_sq(NvmeCtrl *n, uint16_t qid, uint16_t cqid,
                        uint64_t base, uint16_t size)
{
    NvmeSQ *sq;
    NvmeRequest *reqs;

    if (qid > n->max_ioqs || n->sq[qid].valid) {
        return NVME_INVALID_QID | NVME_DNR;
    }
    if (cqid > n->max_ioqs || !n->cq[cqid].valid || (qid && !cqid)) {
        return NVME_CQ_INVALID | NVME_DNR;
    }
    if (size < 2 || size > NVME_MQES + 1) {
        return NVME_MAX_QSIZE_EXCEEDED | NVME_DNR;
    }
    if (base & (n->page_size - 1)) {
        return NVME_INVALID_PRP_OFFSET | NVME_DNR;
    }
    reqs = g_try_new0(NvmeRequest, size);
    if (!reqs) {
        return NVME_INTERNAL_ERROR;
    }
    sq = &n->sq[qid];
    *sq = (NvmeSQ) {
        .valid = true, .qid = qid, .cqid = cqid, .base = base, .size = size,
        .reqs = reqs,
    };
    for (unsigned i = 0; i < size; i++) {
        reqs[i].sq = sq;
        reqs[i].next_free = sq->free_reqs;
        sq->free_reqs = &reqs[i];
    }
    n->cq[cqid].nr_sqs++;
    nvme_db_store(n, 2 * qid, 0);
    nvme_update_qid_bound(n);
    trace_nvme_create_sq(qid, cqid, base, size);
    return NVME_SUCCESS;
}

/* Waits for the SQ's backend requests; their completions still post. */
static void nvme_sq_drain(NvmeCtrl *n, NvmeSQ *sq)
{
    while (sq->inflight && nvme_backend_inflight(n->backend)) {
        nvme_backend_reap(n->backend, true);
    }
}

void nvme_delete_sq(NvmeCtrl *n, uint16_t qid)
{
    NvmeSQ *sq = &n->sq[qid];

    if (!sq->valid) {
        return;
    }
    nvme_sq_drain(n, sq);
    n->cq[sq->cqid].nr_sqs--;
    n->cq[sq->cqid].reserved -= MIN(n->cq[sq->cqid].reserved, sq->inflight);
    g_free(sq->reqs);
    *sq = (NvmeSQ) { .valid = false };
    nvme_db_store(n, 2 * qid, 0);
    nvme_update_qid_bound(n);
    trace_nvme_delete_sq(qid);
}

void nvme_delete_cq(NvmeCtrl *n, uint16_t qid)
{
    if (!n->cq[qid].valid) {
        return;
    }
    n->cq[qid] = (NvmeCQ) { .valid = false };
    nvme_db_store(n, 2 * qid + 1, 0);
    nvme_update_qid_bound(n);
    trace_nvme_delete_cq(qid);
}

/* ---- Completions ---- */

static void nvme_req_free(NvmeRequest *req)
{
    NvmeSQ *sq = req->sq;

    g_aligned_free(req->bounce);
    req->bounce = NULL;
    req->niov = 0;
    req->next_free = sq->free_reqs;
    sq->free_reqs = req;
    sq->inflight--;
}

static bool nvme_cq_post(NvmeCtrl *n, NvmeCQ *cq, const NvmeCqe *cqe)
{
    uint64_t addr = cq->base + (uint64_t)cq->tail * NVME_CQES;
    NvmeCqe *slot = n->dma.ops->ptr(n->dma.opaque, addr, NVME_CQES, true);

    if (slot) {
        /* The phase tag lives in the last word: it must land last. */
        memcpy(slot, cqe, offsetof(NvmeCqe, status));
        __atomic_store_n(&slot->status, cqe->status, __ATOMIC_RELEASE);
        if (n->dma.ops->mark_dirty) {
            n->dma.ops->mark_dirty(n->dma.opaque, addr, NVME_CQES);
        }
    } else if (!nvme_dma_write(&n->dma, addr, cqe, sizeof(*cqe))) {
        return false;
    }
    cq->tail = nvme_q_next(cq->tail, cq->size);
    if (cq->tail == 0) {
        cq->phase = !cq->phase;
    }
    return true;
}

void nvme_req_complete(NvmeCtrl *n, NvmeRequest *req)
{
    NvmeSQ *sq = req->sq;
    NvmeCQ *cq = &n->cq[sq->cqid];
    NvmeCqe cqe;

    if (cq->reserved) {
        cq->reserved--;
    }
    if (n->resetting || !cq->valid) {
        nvme_req_free(req);
        return;
    }
    cqe = (NvmeCqe) {
        .result = htole32(req->result),
        .sq_head = htole16(sq->head),
        .sq_id = htole16(sq->qid),
        .cid = req->cmd.cid,
        .status = htole16((req->status << 1) | cq->phase),
    };
    trace_nvme_complete(sq->qid, le16toh(req->cmd.cid), req->status,
                        req->result);
    if (!nvme_cq_post(n, cq, &cqe)) {
        qemu_log_guest_error("nvme: CQ %u at 0x%" PRIx64 " is not in guest "
                             "memory; controller fatal", cq->qid, cq->base);
        nvme_csts_update(n, 0, NVME_CSTS_CFS);
    } else if (cq->ien) {
        cq->irq_pending = true;
    }
    nvme_req_free(req);
}

/* Interrupts are batched: one per CQ per pass over the doorbells. */
static void nvme_flush_irqs(NvmeCtrl *n)
{
    for (unsigned i = 0; i < n->qid_bound; i++) {
        NvmeCQ *cq = &n->cq[i];

        if (cq->valid && cq->irq_pending) {
            cq->irq_pending = false;
            trace_nvme_irq(cq->qid, cq->vector);
            n->irq_notify(n->irq_opaque, cq->vector);
        }
    }
}

/* ---- Submissions ---- */

static bool nvme_sq_fetch(NvmeCtrl *n, NvmeSQ *sq)
{
    NvmeCQ *cq = &n->cq[sq->cqid];
    bool did = false;

    while (sq->head != sq->tail && !(n->csts & NVME_CSTS_CFS)) {
        NvmeRequest *req = sq->free_reqs;
        uint64_t addr = sq->base + (uint64_t)sq->head * NVME_SQES;

        /* Never fetch what the CQ could not take: the host owns its head. */
        if (!req ||
            nvme_q_space(cq->head, cq->tail, cq->size) <= cq->reserved) {
            break;
        }
        /* Per-queue backend depth; completions let the next pass go on. */
        if (sq->qid && n->sq_depth && sq->inflight >= n->sq_depth) {
            break;
        }
        if (!nvme_dma_read(&n->dma, addr, &req->cmd, sizeof(req->cmd))) {
            qemu_log_guest_error("nvme: SQ %u entry at 0x%" PRIx64 " is not "
                                 "in guest memory; controller fatal",
                                 sq->qid, addr);
            nvme_csts_update(n, 0, NVME_CSTS_CFS);
            break;
        }
        sq->free_reqs = req->next_free;
        sq->head = nvme_q_next(sq->head, sq->size);
        sq->inflight++;
        cq->reserved++;
        req->status = NVME_SUCCESS;
        req->result = 0;
        did = true;
        trace_nvme_submit(sq->qid, req->cmd.opcode, le16toh(req->cmd.cid));
        if (sq->qid == 0) {
            nvme_admin_exec(n, req);
        } else {
            nvme_io_exec(n, req);
        }
        /* An admin command may have deleted this very queue. */
        if (!sq->valid) {
            break;
        }
    }
    return did;
}

static bool nvme_sq_doorbell(NvmeCtrl *n, NvmeSQ *sq)
{
    uint32_t tail = nvme_db_load(n, 2 * sq->qid);

    if (tail != sq->tail) {
        if (tail >= sq->size) {
            qemu_log_guest_error("nvme: SQ %u tail doorbell %u beyond queue "
                                 "size %u", sq->qid, tail, sq->size);
            nvme_db_store(n, 2 * sq->qid, sq->tail);
            return false;
        }
        sq->tail = tail;
    }
    return nvme_sq_fetch(n, sq);
}

static bool nvme_cq_doorbell(NvmeCtrl *n, NvmeCQ *cq)
{
    uint32_t head = nvme_db_load(n, 2 * cq->qid + 1);

    if (head == cq->head) {
        return false;
    }
    if (head >= cq->size) {
        qemu_log_guest_error("nvme: CQ %u head doorbell %u beyond queue "
                             "size %u", cq->qid, head, cq->size);
        nvme_db_store(n, 2 * cq->qid + 1, cq->head);
        return false;
    }
    cq->head = head;
    return true;
}

static bool nvme_poll_locked(NvmeCtrl *n)
{
    bool did = false;

    if (!nvme_ctrl_enabled(n) || (n->csts & NVME_CSTS_CFS) || n->stopped) {
        return false;
    }
    for (unsigned i = 0; i < n->qid_bound; i++) {
        if (n->cq[i].valid) {
            did |= nvme_cq_doorbell(n, &n->cq[i]);
        }
    }
    for (unsigned i = 0; i < n->qid_bound; i++) {
        if (n->sq[i].valid) {
            did |= nvme_sq_doorbell(n, &n->sq[i]);
        }
    }
    return did;
}

bool nvme_ctrl_poll(NvmeCtrl *n)
{
    bool did;

    pthread_mutex_lock(&n->lock);
    if (n->stopped) {
        pthread_mutex_unlock(&n->lock);
        return false;
    }
    if (n->dma.ops->begin) {
        n->dma.ops->begin(n->dma.opaque);
    }
    /* Inside the DMA bracket: a CC.SHN write completes I/O into memory. */
    did = nvme_regs_scan(n);
    did |= nvme_backend_reap(n->backend, false) > 0;
    did |= nvme_poll_locked(n);
    if (n->dma.ops->end) {
        n->dma.ops->end(n->dma.opaque);
    }
    /*
     * A pass that found work is followed at once by another: signal when
     * the queues run dry, or every few passes under sustained load, which
     * saves an eventfd write per batch without delaying anyone for long.
     */
    if (!did || ++n->irq_deferred_passes >= NVME_IRQ_MAX_DEFERRED_PASSES) {
        nvme_flush_irqs(n);
        n->irq_deferred_passes = 0;
    }
    pthread_mutex_unlock(&n->lock);
    return did;
}

void nvme_ctrl_set_bar(NvmeCtrl *n, uint8_t *bar)
{
    nvme_lock_serving(n);
    n->bar = bar;
    nvme_regs_publish_fresh(n);
    pthread_mutex_unlock(&n->lock);
}

void nvme_ctrl_drain(NvmeCtrl *n)
{
    nvme_lock_serving(n);
    while (nvme_backend_inflight(n->backend)) {
        nvme_backend_reap(n->backend, true);
    }
    nvme_flush_irqs(n);
    pthread_mutex_unlock(&n->lock);
}

void nvme_ctrl_doorbell_write(NvmeCtrl *n, uint64_t offset, uint32_t val)
{
    uint64_t idx = (offset - NVME_DB_BASE) / 4;

    if (offset < NVME_DB_BASE || offset & 3 || idx >= 2 * NVME_MAX_QUEUES) {
        return;
    }
    trace_nvme_doorbell_trapped(idx / 2, idx & 1, val);
    nvme_lock_serving(n);
    nvme_db_store(n, idx, val);
    if (nvme_ctrl_enabled(n) && !(n->csts & NVME_CSTS_CFS) && !n->stopped) {
        unsigned qid = idx / 2;

        if (idx & 1) {
            /* A freed CQ slot may unblock any SQ completing into it. */
            if (n->cq[qid].valid && nvme_cq_doorbell(n, &n->cq[qid])) {
                nvme_poll_locked(n);
            }
        } else if (n->sq[qid].valid) {
            nvme_sq_doorbell(n, &n->sq[qid]);
        }
        nvme_flush_irqs(n);
    }
    pthread_mutex_unlock(&n->lock);
}

/* ---- Enable, disable, reset ---- */

/* Drops every queue and held AER; in-flight backend work is discarded. */
static void nvme_teardown_queues(NvmeCtrl *n)
{
    n->resetting = true;
    while (nvme_backend_inflight(n->backend)) {
        nvme_backend_reap(n->backend, true);
    }
    for (unsigned i = 0; i <= n->max_ioqs; i++) {
        nvme_delete_sq(n, i);
    }
    for (unsigned i = 0; i <= n->max_ioqs; i++) {
        nvme_delete_cq(n, i);
    }
    n->aers_held = 0;
    n->resetting = false;
    memset(n->bar + NVME_DB_BASE, 0, 8 * NVME_MAX_QUEUES);
}

static void nvme_features_reset(NvmeCtrl *n)
{
    n->feat_nr_queues = (n->max_ioqs - 1) | ((n->max_ioqs - 1) << 16);
    n->feat_irq_coalesce = 0;
    n->feat_temp_thresh = 0x157;    /* 343 K over-temperature threshold */
    n->feat_arbitration = 0;
    n->feat_power_mgmt = 0;
    n->feat_error_recovery = 0;
    n->feat_async_event = 0;
    n->write_cache = nvme_backend_has_vwc(n->backend);
    nvme_backend_set_write_cache(n->backend, n->write_cache);
}

static void nvme_ctrl_disable(NvmeCtrl *n)
{
    nvme_teardown_queues(n);
    nvme_csts_update(n, NVME_CSTS_RDY | NVME_CSTS_CFS, 0);
    trace_nvme_disable();
}

static void nvme_ctrl_enable(NvmeCtrl *n)
{
    unsigned mps = NVME_CC_MPS(n->cc);
    uint16_t sqs = (n->aqa & 0xfff) + 1;
    uint16_t cqs = ((n->aqa >> 16) & 0xfff) + 1;
    uint16_t st;

    /* A refused configuration is reported the way hardware does: CFS. */
    if (NVME_CC_CSS(n->cc) != 0 || NVME_CC_AMS(n->cc) != 0 ||
        mps > NVME_MPSMAX) {
        qemu_log_guest_error("nvme: CC 0x%x asks for an unsupported command "
                             "set, arbitration or page size", n->cc);
        nvme_csts_update(n, 0, NVME_CSTS_CFS);
        return;
    }
    n->page_size = 1u << (12 + mps);
    st = nvme_create_cq(n, 0, n->acq, cqs, 0, true);
    if (st == NVME_SUCCESS) {
        st = nvme_create_sq(n, 0, 0, n->asq, sqs);
    }
    if (st != NVME_SUCCESS) {
        qemu_log_guest_error("nvme: admin queues rejected (AQA 0x%x ASQ 0x%"
                             PRIx64 " ACQ 0x%" PRIx64 "): status 0x%x",
                             n->aqa, n->asq, n->acq, st);
        nvme_teardown_queues(n);
        nvme_csts_update(n, 0, NVME_CSTS_CFS);
        return;
    }
    nvme_csts_update(n, ~0u, NVME_CSTS_RDY);
    trace_nvme_enable(n->page_size, sqs, cqs);
}

static void nvme_ctrl_reset_locked(NvmeCtrl *n)
{
    n->stopped = false;
    nvme_ctrl_disable(n);
    n->cc = 0;
    nvme_csts_update(n, ~0u, 0);
    n->aqa = 0;
    n->asq = 0;
    n->acq = 0;
    n->intms = 0;
    n->page_size = 4096;
    nvme_features_reset(n);
}

void nvme_ctrl_reset(NvmeCtrl *n)
{
    nvme_lock_serving(n);
    nvme_ctrl_reset_locked(n);
    /* Like hardware: a store racing with the reset is lost, not replayed. */
    nvme_regs_publish_fresh(n);
    pthread_mutex_unlock(&n->lock);
}

/* ---- Register file ---- */

static uint32_t nvme_reg_read32(NvmeCtrl *n, uint64_t offset)
{
    switch (offset) {
    case NVME_REG_CAP:
        return n->cap;
    case NVME_REG_CAP + 4:
        return n->cap >> 32;
    case NVME_REG_VS:
        return NVME_VERSION_1_4;
    case NVME_REG_INTMS:
    case NVME_REG_INTMC:
        return n->intms;
    case NVME_REG_CC:
        return n->cc;
    case NVME_REG_CSTS:
        return n->csts;
    case NVME_REG_AQA:
        return n->aqa;
    case NVME_REG_ASQ:
        return n->asq;
    case NVME_REG_ASQ + 4:
        return n->asq >> 32;
    case NVME_REG_ACQ:
        return n->acq;
    case NVME_REG_ACQ + 4:
        return n->acq >> 32;
    default:
        /* NSSR, CMB, PMR and the rest: reserved or unsupported, read 0. */
        return 0;
    }
}

static void nvme_cc_write(NvmeCtrl *n, uint32_t val)
{
    bool was_en = n->cc & NVME_CC_EN;
    bool en = val & NVME_CC_EN;

    trace_nvme_cc_write(n->cc, val);
    if (was_en && !en) {
        n->cc = val;
        nvme_ctrl_disable(n);
        nvme_csts_update(n, NVME_CSTS_SHST_MASK, 0);
        return;
    }
    if (!was_en && en) {
        n->cc = val;
        nvme_csts_update(n, NVME_CSTS_SHST_MASK, 0);
        nvme_ctrl_enable(n);
    } else if (!en) {
        n->cc = val;
    } else {
        /* Enabled: only the shutdown field may change. */
        n->cc = (n->cc & ~(3u << 14)) | (val & (3u << 14));
    }
    if (NVME_CC_SHN(val)) {
        /* Normal or abrupt shutdown: finish I/O and make it durable. */
        while (nvme_backend_inflight(n->backend)) {
            nvme_backend_reap(n->backend, true);
        }
        nvme_backend_sync(n->backend);
        nvme_csts_update(n, NVME_CSTS_SHST_MASK, NVME_CSTS_SHST_DONE);
        trace_nvme_shutdown(NVME_CC_SHN(val));
    }
}

static void nvme_reg_write32(NvmeCtrl *n, uint64_t offset, uint32_t val)
{
    bool en = n->cc & NVME_CC_EN;

    switch (offset) {
    case NVME_REG_INTMS:
        n->intms |= val;
        break;
    case NVME_REG_INTMC:
        n->intms &= ~val;
        break;
    case NVME_REG_CC:
        nvme_cc_write(n, val);
        break;
    case NVME_REG_AQA:
        if (!en) {
            n->aqa = val & 0x0fff0fff;
        }
        break;
    case NVME_REG_ASQ:
    case NVME_REG_ASQ + 4:
    case NVME_REG_ACQ:
    case NVME_REG_ACQ + 4: {
        uint64_t *reg = offset < NVME_REG_ACQ ? &n->asq : &n->acq;

        /* The admin queue bases are fixed while the controller runs. */
        if (en) {
            break;
        }
        if (offset & 4) {
            *reg = deposit64(*reg, 32, 32, val);
        } else {
            *reg = deposit64(*reg, 0, 32, val & ~0xfffu);
        }
        break;
    }
    case NVME_REG_NSSR:
        /* Subsystem reset is not supported (CAP.NSSRS = 0). */
        break;
    default:
        qemu_log_guest_error("nvme: write 0x%x to read-only or reserved "
                             "register 0x%" PRIx64, val, offset);
        break;
    }
}

uint64_t nvme_ctrl_reg_read(NvmeCtrl *n, uint64_t offset, unsigned size)
{
    uint64_t val;

    if ((size != 4 && size != 8) || offset & (size - 1) ||
        offset + size > NVME_DB_BASE) {
        qemu_log_guest_error("nvme: bad register read at 0x%" PRIx64
                             " size %u", offset, size);
        return 0;
    }
    nvme_lock_serving(n);
    /* A store through the mapping comes first, as it did for the guest. */
    if (!n->stopped && nvme_regs_scan(n) && nvme_ctrl_enabled(n) &&
        n->kick) {
        n->kick(n->kick_opaque);
    }
    val = nvme_reg_read32(n, offset);
    if (size == 8) {
        val |= (uint64_t)nvme_reg_read32(n, offset + 4) << 32;
    }
    pthread_mutex_unlock(&n->lock);
    trace_nvme_reg_read(offset, size, val);
    return val;
}

void nvme_ctrl_reg_write(NvmeCtrl *n, uint64_t offset, uint64_t val,
                         unsigned size)
{
    bool kick;

    if ((size != 4 && size != 8) || offset & (size - 1) ||
        offset + size > NVME_DB_BASE) {
        qemu_log_guest_error("nvme: bad register write at 0x%" PRIx64
                             " size %u", offset, size);
        return;
    }
    trace_nvme_reg_write(offset, size, val);
    nvme_lock_serving(n);
    if (n->stopped) {
        pthread_mutex_unlock(&n->lock);
        qemu_log_guest_error("nvme: register write at 0x%" PRIx64 " while "
                             "the device is stopped for migration ignored",
                             offset);
        return;
    }
    nvme_regs_scan(n);
    nvme_reg_write32(n, offset, val);
    if (size == 8) {
        nvme_reg_write32(n, offset + 4, val >> 32);
    }
    nvme_regs_publish(n);
    kick = nvme_ctrl_enabled(n);
    pthread_mutex_unlock(&n->lock);
    if (kick && n->kick) {
        n->kick(n->kick_opaque);
    }
}

/* ---- Life cycle ---- */

bool nvme_ctrl_init(NvmeCtrl *n, const NvmeCtrlConfig *cfg, Error **errp)
{
    uint64_t size = nvme_backend_size(cfg->backend);

    if (cfg->bar_size < NVME_DB_BASE + 8 * NVME_MAX_QUEUES) {
        error_setg(errp, "BAR0 of %" PRIu64 " bytes cannot hold the "
                   "doorbells", cfg->bar_size);
        return false;
    }
    if (cfg->lba_size != 512 && cfg->lba_size != 4096) {
        error_setg(errp, "LBA size %u is not 512 or 4096", cfg->lba_size);
        return false;
    }
    if (size < cfg->lba_size) {
        error_setg(errp, "backend of %" PRIu64 " bytes holds no block of "
                   "%u bytes", size, cfg->lba_size);
        return false;
    }
    if (cfg->max_ioqs < 1 || cfg->max_ioqs > NVME_MAX_IOQS ||
        cfg->nvectors < 1) {
        error_setg(errp, "%u I/O queues with %u vectors is not supported",
                   cfg->max_ioqs, cfg->nvectors);
        return false;
    }
    memset(n, 0, sizeof(*n));
    pthread_mutex_init(&n->lock, NULL);
    n->backend = cfg->backend;
    n->dma = cfg->dma;
    n->irq_notify = cfg->irq_notify;
    n->irq_opaque = cfg->irq_opaque;
    n->kick = cfg->kick;
    n->kick_opaque = cfg->kick_opaque;
    n->lock_wait = cfg->lock_wait;
    n->lock_wait_opaque = cfg->lock_wait_opaque;
    n->bar = cfg->bar;
    n->bar_size = cfg->bar_size;
    n->max_ioqs = cfg->max_ioqs;
    n->nvectors = cfg->nvectors;
    n->sq_depth = cfg->sq_depth;
    n->lba_size = cfg->lba_size;
    n->lba_shift = __builtin_ctz(cfg->lba_size);
    nvme_backend_set_completion(n->backend, nvme_io_backend_done, n);
    n->nlbas = size >> n->lba_shift;
    g_strlcpy(n->serial, cfg->serial ? cfg->serial : "CONDUIT0001",
              sizeof(n->serial));
    n->cap = NVME_MQES |
             (1ull << 16) |                     /* CQR: contiguous queues */
             ((uint64_t)NVME_CAP_TO << 24) |
             (0ull << 32) |                     /* DSTRD: 4-byte stride */
             (1ull << 37) |                     /* CSS: NVM command set */
             ((uint64_t)NVME_MPSMIN << 48) |
             ((uint64_t)NVME_MPSMAX << 52);
    nvme_ctrl_reset_locked(n);
    nvme_regs_publish_fresh(n);
    return true;
}

void nvme_ctrl_cleanup(NvmeCtrl *n)
{
    nvme_ctrl_reset(n);
    pthread_mutex_destroy(&n->lock);
}

/* ---- Migration ---- */

#define NVME_MIG_MAGIC      0x4d4d564eu     /* "NVMM" */
#define NVME_MIG_VERSION    1
#define NVME_MIG_BLOCK      4096

void nvme_ctrl_pause(NvmeCtrl *n)
{
    nvme_lock_serving(n);
    n->stopped = true;
    /* Completions post (the CQE lands, irq_pending records the vector). */
    while (nvme_backend_inflight(n->backend)) {
        nvme_backend_reap(n->backend, true);
    }
    pthread_mutex_unlock(&n->lock);
    trace_nvme_mig_pause();
}

void nvme_ctrl_resume(NvmeCtrl *n)
{
    bool kick;

    nvme_lock_serving(n);
    n->stopped = false;
    nvme_flush_irqs(n);
    kick = nvme_ctrl_enabled(n);
    pthread_mutex_unlock(&n->lock);
    trace_nvme_mig_resume();
    if (kick && n->kick) {
        n->kick(n->kick_opaque);
    }
}

static void put8(GByteArray *o, uint8_t v)
{
    g_byte_array_append(o, &v, 1);
}

static void put16(GByteArray *o, uint16_t v)
{
    v = htole16(v);
    g_byte_array_append(o, (const guint8 *)&v, 2);
}

static void put32(GByteArray *o, uint32_t v)
{
    v = htole32(v);
    g_byte_array_append(o, (const guint8 *)&v, 4);
}

static void put64(GByteArray *o, uint64_t v)
{
    v = htole64(v);
    g_byte_array_append(o, (const guint8 *)&v, 8);
}

static bool nvme_block_is_zero(const uint8_t *p, size_t len)
{
    return !len || (p[0] == 0 && !memcmp(p, p + 1, len - 1));
}

/* The admin requests that are not free: the held AERs (paused). */
static unsigned nvme_held_aers(NvmeCtrl *n, uint16_t *cids, unsigned max)
{
    NvmeSQ *sq = &n->sq[0];
    g_autofree bool *free_slot = NULL;
    unsigned count = 0;

    if (!sq->valid) {
        return 0;
    }
    free_slot = g_new0(bool, sq->size);
    for (NvmeRequest *r = sq->free_reqs; r; r = r->next_free) {
        free_slot[r - sq->reqs] = true;
    }
    for (unsigned i = 0; i < sq->size && count < max; i++) {
        if (!free_slot[i] && sq->reqs[i].cmd.opcode == NVME_ADM_ASYNC_EVENT) {
            cids[count++] = sq->reqs[i].cmd.cid;
        }
    }
    return count;
}

void nvme_ctrl_save(NvmeCtrl *n, GByteArray *o)
{
    uint16_t cids[NVME_AERL + 1];
    unsigned naers;
    uint8_t *ram = nvme_backend_ram(n->backend);

    nvme_lock_serving(n);
    put32(o, NVME_MIG_MAGIC);
    put32(o, NVME_MIG_VERSION);
    put32(o, n->lba_size);
    put64(o, n->nlbas);
    put32(o, n->max_ioqs);
    put32(o, n->nvectors);
    put32(o, n->cc);
    put32(o, n->csts);
    put32(o, n->aqa);
    put64(o, n->asq);
    put64(o, n->acq);
    put32(o, n->intms);
    put32(o, n->page_size);
    put32(o, n->feat_nr_queues);
    put32(o, n->feat_irq_coalesce);
    put32(o, n->feat_temp_thresh);
    put32(o, n->feat_arbitration);
    put32(o, n->feat_power_mgmt);
    put32(o, n->feat_error_recovery);
    put32(o, n->feat_async_event);
    put8(o, n->write_cache);
    put64(o, n->units_read);
    put64(o, n->units_written);
    put64(o, n->host_reads);
    put64(o, n->host_writes);
    for (unsigned q = 0; q <= n->max_ioqs; q++) {
        NvmeCQ *cq = &n->cq[q];

        put8(o, cq->valid);
        if (cq->valid) {
            put64(o, cq->base);
            put16(o, cq->size);
            put16(o, cq->head);
            put16(o, cq->tail);
            put16(o, cq->vector);
            put8(o, cq->ien);
            put8(o, cq->phase);
            put8(o, cq->irq_pending);
        }
    }
    for (unsigned q = 0; q <= n->max_ioqs; q++) {
        NvmeSQ *sq = &n->sq[q];

        put8(o, sq->valid);
        if (sq->valid) {
            put16(o, sq->cqid);
            put64(o, sq->base);
            put16(o, sq->size);
            put16(o, sq->head);
            put16(o, sq->tail);
        }
    }
    for (unsigned i = 0; i < 2 * (n->max_ioqs + 1); i++) {
        put32(o, nvme_db_load(n, i));
    }
    naers = nvme_held_aers(n, cids, G_N_ELEMENTS(cids));
    put32(o, naers);
    for (unsigned i = 0; i < naers; i++) {
        put16(o, le16toh(cids[i]));
    }
    /* The namespace: a shared file needs nothing, RAM travels here. */
    put8(o, ram != NULL);
    if (ram) {
        uint64_t size = nvme_backend_size(n->backend);

        put64(o, size);
        for (uint64_t off = 0; off < size; off += NVME_MIG_BLOCK) {
            uint64_t len = MIN(NVME_MIG_BLOCK, size - off);
            bool zero = nvme_block_is_zero(ram + off, len);

            put8(o, !zero);
            if (!zero) {
                g_byte_array_append(o, ram + off, len);
            }
        }
    }
    pthread_mutex_unlock(&n->lock);
    trace_nvme_mig_save(o->len);
}

typedef struct MigRd {
    const uint8_t *p;
    size_t len, pos;
    bool bad;
} MigRd;

static const uint8_t *get_n(MigRd *r, size_t n)
{
    const uint8_t *p;

    if (r->bad || r->len - r->pos < n) {
        r->bad = true;
        return NULL;
    }
    p = r->p + r->pos;
    r->pos += n;
    return p;
}

static uint64_t get_le(MigRd *r, size_t n)
{
    const uint8_t *p = get_n(r, n);
    uint64_t v = 0;

    for (size_t i = 0; p && i < n; i++) {
        v |= (uint64_t)p[i] << (8 * i);
    }
    return v;
}

typedef struct MigQ {
    bool valid;
    uint16_t cqid, size, head, tail, vector;
    uint64_t base;
    bool ien, phase, irq_pending;
} MigQ;

bool nvme_ctrl_load(NvmeCtrl *n, const uint8_t *data, size_t len,
                    Error **errp)
{
    MigRd r = { .p = data, .len = len };
    g_autofree MigQ *cqs = g_new0(MigQ, n->max_ioqs + 1);
    g_autofree MigQ *sqs = g_new0(MigQ, n->max_ioqs + 1);
    g_autofree uint32_t *dbs = g_new0(uint32_t, 2 * (n->max_ioqs + 1));
    uint16_t cids[NVME_AERL + 1];
    uint32_t cc, csts, aqa, intms, page_size, feat[7], naers;
    uint64_t asq, acq, smart[4];
    uint8_t write_cache, has_ram;
    uint8_t *ram = nvme_backend_ram(n->backend);
    bool enabled;
    const uint8_t *ram_data = NULL;
    size_t ram_pos = 0;

    if (get_le(&r, 4) != NVME_MIG_MAGIC || r.bad) {
        error_setg(errp, "nvme: migration data does not start with the "
                   "controller magic");
        return false;
    }
    if (get_le(&r, 4) != NVME_MIG_VERSION) {
        error_setg(errp, "nvme: migration data version not supported");
        return false;
    }
    if (get_le(&r, 4) != n->lba_size || get_le(&r, 8) != n->nlbas ||
        get_le(&r, 4) != n->max_ioqs || get_le(&r, 4) != n->nvectors) {
        error_setg(errp, "nvme: the source controller's geometry (LBA size, "
                   "capacity, queues, vectors) differs from this one's: "
                   "start the destination server with the same options");
        return false;
    }
    cc = get_le(&r, 4);
    csts = get_le(&r, 4);
    aqa = get_le(&r, 4);
    asq = get_le(&r, 8);
    acq = get_le(&r, 8);
    intms = get_le(&r, 4);
    page_size = get_le(&r, 4);
    for (unsigned i = 0; i < 7; i++) {
        feat[i] = get_le(&r, 4);
    }
    write_cache = get_le(&r, 1);
    for (unsigned i = 0; i < 4; i++) {
        smart[i] = get_le(&r, 8);
    }
    enabled = (cc & NVME_CC_EN) && (csts & NVME_CSTS_RDY);
    if (r.bad || write_cache > 1 || NVME_CC_MPS(cc) > NVME_MPSMAX ||
        page_size != 1u << (12 + NVME_CC_MPS(cc)) ||
        (csts & ~(NVME_CSTS_RDY | NVME_CSTS_CFS | NVME_CSTS_SHST_MASK))) {
        error_setg(errp, "nvme: migrated registers are inconsistent");
        return false;
    }
    for (unsigned q = 0; q <= n->max_ioqs; q++) {
        MigQ *c = &cqs[q];

        c->valid = get_le(&r, 1);
        if (c->valid) {
            c->base = get_le(&r, 8);
            c->size = get_le(&r, 2);
            c->head = get_le(&r, 2);
            c->tail = get_le(&r, 2);
            c->vector = get_le(&r, 2);
            c->ien = get_le(&r, 1);
            c->phase = get_le(&r, 1);
            c->irq_pending = get_le(&r, 1);
            if (c->size < 2 || c->size > NVME_MQES + 1 ||
                c->head >= c->size || c->tail >= c->size ||
                c->vector >= n->nvectors || c->base & (page_size - 1)) {
                r.bad = true;
            }
        }
    }
    for (unsigned q = 0; q <= n->max_ioqs; q++) {
        MigQ *sq = &sqs[q];

        sq->valid = get_le(&r, 1);
        if (sq->valid) {
            sq->cqid = get_le(&r, 2);
            sq->base = get_le(&r, 8);
            sq->size = get_le(&r, 2);
            sq->head = get_le(&r, 2);
            sq->tail = get_le(&r, 2);
            if (sq->cqid > n->max_ioqs || !cqs[sq->cqid].valid ||
                (q && !sq->cqid) || (!q && sq->cqid) ||
                sq->size < 2 || sq->size > NVME_MQES + 1 ||
                sq->head >= sq->size || sq->tail >= sq->size ||
                sq->base & (page_size - 1)) {
                r.bad = true;
            }
        }
    }
    if (r.bad || cqs[0].valid != enabled || sqs[0].valid != enabled ||
        (!enabled && (cqs[0].valid || sqs[0].valid))) {
        error_setg(errp, "nvme: migrated queues are inconsistent");
        return false;
    }
    for (unsigned q = 1; q <= n->max_ioqs; q++) {
        if (!enabled && (cqs[q].valid || sqs[q].valid)) {
            error_setg(errp, "nvme: migrated I/O queues on a disabled "
                       "controller");
            return false;
        }
    }
    for (unsigned i = 0; i < 2 * (n->max_ioqs + 1); i++) {
        dbs[i] = get_le(&r, 4);
    }
    naers = get_le(&r, 4);
    if (r.bad || naers > NVME_AERL + 1 ||
        (naers && (!enabled || naers >= sqs[0].size))) {
        error_setg(errp, "nvme: migrated AER count invalid");
        return false;
    }
    for (unsigned i = 0; i < naers; i++) {
        cids[i] = get_le(&r, 2);
    }
    has_ram = get_le(&r, 1);
    if (r.bad || has_ram > 1 || has_ram != (ram != NULL)) {
        error_setg(errp, "nvme: the source's namespace backend (%s) is not "
                   "this one's (%s): both must use ram, or share one file",
                   has_ram ? "ram" : "shared", ram ? "ram" : "shared");
        return false;
    }
    if (ram) {
        uint64_t size = nvme_backend_size(n->backend);

        if (get_le(&r, 8) != size) {
            error_setg(errp, "nvme: namespace size differs");
            return false;
        }
        /* Validate the block list before copying anything. */
        ram_pos = r.pos;
        for (uint64_t off = 0; off < size && !r.bad; off += NVME_MIG_BLOCK) {
            uint8_t flag = get_le(&r, 1);

            if (flag > 1) {
                r.bad = true;
            } else if (flag) {
                get_n(&r, MIN(NVME_MIG_BLOCK, size - off));
            }
        }
        ram_data = data;
    }
    if (r.bad || r.pos != r.len) {
        error_setg(errp, "nvme: migration data truncated or with %zu stray "
                   "bytes", r.bad ? 0 : r.len - r.pos);
        return false;
    }

    /* Everything checked: apply. */
    nvme_lock_serving(n);
    nvme_teardown_queues(n);
    n->cc = cc;
    n->csts = csts;
    n->aqa = aqa;
    n->asq = asq;
    n->acq = acq;
    n->intms = intms;
    n->page_size = page_size;
    n->feat_nr_queues = feat[0];
    n->feat_irq_coalesce = feat[1];
    n->feat_temp_thresh = feat[2];
    n->feat_arbitration = feat[3];
    n->feat_power_mgmt = feat[4];
    n->feat_error_recovery = feat[5];
    n->feat_async_event = feat[6];
    n->write_cache = write_cache;
    nvme_backend_set_write_cache(n->backend, n->write_cache);
    n->units_read = smart[0];
    n->units_written = smart[1];
    n->host_reads = smart[2];
    n->host_writes = smart[3];
    for (unsigned q = 0; q <= n->max_ioqs; q++) {
        MigQ *c = &cqs[q];

        if (c->valid) {
            nvme_create_cq(n, q, c->base, c->size, c->vector, c->ien);
            n->cq[q].head = c->head;
            n->cq[q].tail = c->tail;
            n->cq[q].phase = c->phase;
            n->cq[q].irq_pending = c->irq_pending;
        }
    }
    for (unsigned q = 0; q <= n->max_ioqs; q++) {
        MigQ *sq = &sqs[q];

        if (sq->valid &&
            nvme_create_sq(n, q, sq->cqid, sq->base, sq->size) ==
            NVME_SUCCESS) {
            n->sq[q].head = sq->head;
            n->sq[q].tail = sq->tail;
        }
    }
    for (unsigned i = 0; i < naers && n->sq[0].valid; i++) {
        NvmeRequest *req = n->sq[0].free_reqs;

        if (!req) {
            break;
        }
        n->sq[0].free_reqs = req->next_free;
        n->sq[0].inflight++;
        memset(&req->cmd, 0, sizeof(req->cmd));
        req->cmd.opcode = NVME_ADM_ASYNC_EVENT;
        req->cmd.cid = htole16(cids[i]);
        n->aers_held++;
    }
    for (unsigned i = 0; i < 2 * (n->max_ioqs + 1); i++) {
        nvme_db_store(n, i, dbs[i]);
    }
    if (ram) {
        uint64_t size = nvme_backend_size(n->backend);
        size_t pos = ram_pos;

        for (uint64_t off = 0; off < size; off += NVME_MIG_BLOCK) {
            uint64_t blen = MIN(NVME_MIG_BLOCK, size - off);

            if (ram_data[pos++]) {
                memcpy(ram + off, ram_data + pos, blen);
                pos += blen;
            } else {
                memset(ram + off, 0, blen);
            }
        }
    }
    nvme_regs_publish_fresh(n);
    pthread_mutex_unlock(&n->lock);
    trace_nvme_mig_load(len, enabled);
    return true;
}
