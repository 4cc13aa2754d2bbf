/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * vfio-user-nvme: admin command set.
 */
#include "qemu/osdep.h"
#include "qemu/error-report.h"
#include "nvme.h"
#include "trace.h"

#define NVME_VID            0x1b36  /* the Red Hat/QEMU ID Linux knows */
#define NVME_MODEL          "Conduit vfio-user NVMe"

/* Space-padded ASCII, as Identify strings are. */
static void nvme_put_str(uint8_t *dst, const char *s, size_t width)
{
    size_t len = MIN(strlen(s), width);

    memset(dst, ' ', width);
    memcpy(dst, s, len);
}

void nvme_identify_ctrl_build(NvmeCtrl *n, uint8_t *id)
{
    g_autofree char *nqn = g_strdup_printf("nqn.2026-11.org.conduit:nvme:%s",
                                           n->serial);

    memset(id, 0, NVME_ID_SIZE);
    stw_le_p(id + NVME_IDC_VID, NVME_VID);
    stw_le_p(id + NVME_IDC_SSVID, NVME_VID);
    nvme_put_str(id + NVME_IDC_SN, n->serial, 20);
    nvme_put_str(id + NVME_IDC_MN, NVME_MODEL, 40);
    nvme_put_str(id + NVME_IDC_FR, "1.0", 8);
    id[NVME_IDC_RAB] = 6;
    id[NVME_IDC_IEEE] = 0x00;
    id[NVME_IDC_IEEE + 1] = 0x54;
    id[NVME_IDC_IEEE + 2] = 0x52;
    id[NVME_IDC_MDTS] = NVME_MDTS;
    stw_le_p(id + NVME_IDC_CNTLID, 1);
    stl_le_p(id + NVME_IDC_VER, NVME_VERSION_1_4);
    id[NVME_IDC_CNTRLTYPE] = 1;                 /* I/O controller */
    stw_le_p(id + NVME_IDC_OACS, 0);
    id[NVME_IDC_ACL] = 3;
    id[NVME_IDC_AERL] = NVME_AERL;
    id[NVME_IDC_FRMW] = 0x3;                    /* one read-only slot */
    id[NVME_IDC_LPA] = 0;
    id[NVME_IDC_ELPE] = NVME_ELPE;
    stw_le_p(id + NVME_IDC_WCTEMP, 0x157);
    stw_le_p(id + NVME_IDC_CCTEMP, 0x175);
    id[NVME_IDC_SQES] = 0x66;                   /* 64-byte entries */
    id[NVME_IDC_CQES] = 0x44;                   /* 16-byte entries */
    stw_le_p(id + NVME_IDC_MAXCMD, 0);
    stl_le_p(id + NVME_IDC_NN, 1);
    stw_le_p(id + NVME_IDC_ONCS, NVME_ONCS_WRITE_ZEROES);
    id[NVME_IDC_VWC] = nvme_backend_has_vwc(n->backend) ? 1 : 0;
    stl_le_p(id + NVME_IDC_SGLS, 0);
    g_strlcpy((char *)id + NVME_IDC_SUBNQN, nqn, 256);
    /* Power state 0: 25 W max power, in 0.01 W units. */
    stw_le_p(id + NVME_IDC_PSD0, 2500);
}

void nvme_identify_ns_build(NvmeCtrl *n, uint8_t *id)
{
    uint32_t crc = 0;

    memset(id, 0, NVME_ID_SIZE);
    stq_le_p(id + NVME_IDNS_NSZE, n->nlbas);
    stq_le_p(id + NVME_IDNS_NCAP, n->nlbas);
    stq_le_p(id + NVME_IDNS_NUSE, n->nlbas);
    id[NVME_IDNS_NLBAF] = 0;                    /* one format */
    id[NVME_IDNS_FLBAS] = 0;
    /* A stable identifier derived from the serial number. */
    for (const char *p = n->serial; *p; p++) {
        crc = crc * 31 + (uint8_t)*p;
    }
    id[NVME_IDNS_EUI64] = 0x52;
    id[NVME_IDNS_EUI64 + 1] = 0x54;
    id[NVME_IDNS_EUI64 + 2] = 0x00;
    stl_be_p(id + NVME_IDNS_EUI64 + 4, crc);
    /* LBA format 0: no metadata, LBADS = log2(block size). */
    stl_le_p(id + NVME_IDNS_LBAF0, (uint32_t)n->lba_shift << 16);
}

static uint16_t nvme_to_host(NvmeCtrl *n, NvmeRequest *req, const void *buf,
                             uint64_t len)
{
    uint16_t st = nvme_prp_map(&n->dma, le64toh(req->cmd.prp1),
                               le64toh(req->cmd.prp2), len, n->page_size,
                               &req->sgl);

    if (st != NVME_SUCCESS) {
        return st;
    }
    if (!nvme_sgl_to_guest(&n->dma, &req->sgl, buf)) {
        return NVME_DATA_TRANSFER_ERROR | NVME_DNR;
    }
    return NVME_SUCCESS;
}

static uint16_t nvme_identify(NvmeCtrl *n, NvmeRequest *req)
{
    uint8_t cns = le32toh(req->cmd.cdw10) & 0xff;
    uint8_t csi = le32toh(req->cmd.cdw11) >> 24;
    uint32_t nsid = le32toh(req->cmd.nsid);
    g_autofree uint8_t *buf = g_malloc0(NVME_ID_SIZE);

    trace_nvme_identify(cns, nsid);
    switch (cns) {
    case 0x00:  /* namespace */
        if (nsid != 1) {
            return NVME_INVALID_NSID | NVME_DNR;
        }
        nvme_identify_ns_build(n, buf);
        break;
    case 0x01:  /* controller */
        nvme_identify_ctrl_build(n, buf);
        break;
    case 0x02:  /* active namespace IDs above nsid */
        if (nsid >= 0xfffffffe) {
            return NVME_INVALID_NSID | NVME_DNR;
        }
        if (nsid < 1) {
            stl_le_p(buf, 1);
        }
        break;
    case 0x03:  /* namespace identification descriptors */
        if (nsid != 1) {
            return NVME_INVALID_NSID | NVME_DNR;
        }
    {
        g_autofree uint8_t *ns = g_malloc(NVME_ID_SIZE);

        /* One EUI-64 descriptor, the same as Identify Namespace reports. */
        nvme_identify_ns_build(n, ns);
        buf[0] = 1;
        buf[1] = 8;
        memcpy(buf + 4, ns + NVME_IDNS_EUI64, 8);
        break;
    }
    case 0x05:  /* I/O command set specific namespace: nothing for NVM */
    case 0x06:  /* ... and controller */
        if (csi != 0 || (cns == 0x05 && nsid != 1)) {
            return NVME_INVALID_FIELD | NVME_DNR;
        }
        break;
    default:
        return NVME_INVALID_FIELD | NVME_DNR;
    }
    return nvme_to_host(n, req, buf, NVME_ID_SIZE);
}

static uint16_t nvme_admin_create_cq(NvmeCtrl *n, NvmeRequest *req)
{
    uint32_t dw10 = le32toh(req->cmd.cdw10);
    uint32_t dw11 = le32toh(req->cmd.cdw11);
    uint16_t qid = dw10 & 0xffff;

    if (qid == 0) {
        return NVME_INVALID_QID | NVME_DNR;
    }
    if (!(dw11 & 1)) {
        /* CAP.CQR: only physically contiguous queues. */
        return NVME_INVALID_FIELD | NVME_DNR;
    }
    if (NVME_CC_IOCQES(n->cc) != 4) {
        return NVME_INVALID_FIELD | NVME_DNR;
    }
    /* QSIZE is 0-based; 0xffff would not fit and is too large anyway. */
    return nvme_create_cq(n, qid, le64toh(req->cmd.prp1),
                          (dw10 >> 16) == 0xffff ? 0 : (dw10 >> 16) + 1,
                          dw11 >> 16, dw11 & 2);
}

static uint16_t nvme_admin_create_sq(NvmeCtrl *n, NvmeRequest *req)
{
    uint32_t dw10 = le32toh(req->cmd.cdw10);
    uint32_t dw11 = le32toh(req->cmd.cdw11);
    uint16_t qid = dw10 & 0xffff;
    uint16_t cqid = dw11 >> 16;

    if (qid == 0) {
        return NVME_INVALID_QID | NVME_DNR;
    }
    if (!(dw11 & 1)) {
        return NVME_INVALID_FIELD | NVME_DNR;
    }
    if (NVME_CC_IOSQES(n->cc) != 6) {
        return NVME_INVALID_FIELD | NVME_DNR;
    }
    if (cqid == 0) {
        return NVME_CQ_INVALID | NVME_DNR;
    }
    return nvme_create_sq(n, qid, cqid, le64toh(req->cmd.prp1),
                          (dw10 >> 16) == 0xffff ? 0 : (dw10 >> 16) + 1);
}

static uint16_t nvme_admin_delete_sq(NvmeCtrl *n, NvmeRequest *req)
{
    uint16_t qid = le32toh(req->cmd.cdw10) & 0xffff;

    if (qid == 0 || qid > n->max_ioqs || !n->sq[qid].valid) {
        return NVME_INVALID_QID | NVME_DNR;
    }
    nvme_delete_sq(n, qid);
    return NVME_SUCCESS;
}

static uint16_t nvme_admin_delete_cq(NvmeCtrl *n, NvmeRequest *req)
{
    uint16_t qid = le32toh(req->cmd.cdw10) & 0xffff;

    if (qid == 0 || qid > n->max_ioqs || !n->cq[qid].valid) {
        return NVME_INVALID_QID | NVME_DNR;
    }
    if (n->cq[qid].nr_sqs) {
        return NVME_INVALID_QUEUE_DEL | NVME_DNR;
    }
    nvme_delete_cq(n, qid);
    return NVME_SUCCESS;
}

static uint16_t nvme_features(NvmeCtrl *n, NvmeRequest *req, bool set)
{
    uint32_t dw10 = le32toh(req->cmd.cdw10);
    uint32_t dw11 = le32toh(req->cmd.cdw11);
    uint8_t fid = dw10 & 0xff;
    uint8_t sel = (dw10 >> 8) & 0x7;
    uint32_t *reg = NULL;

    trace_nvme_features(set, fid, dw11);
    if (!set && sel == 3) {
        /* Supported capabilities: everything is changeable, nothing saved. */
        req->result = 1u << 2;
        return NVME_SUCCESS;
    }
    if (set ? (dw10 >> 31) : (sel == 2)) {
        /* Save / saved values are not supported. */
        return NVME_INVALID_FIELD | NVME_DNR;
    }
    switch (fid) {
    case NVME_FEAT_NUM_QUEUES:
        if (set) {
            uint16_t nsqr = dw11 & 0xffff;
            uint16_t ncqr = dw11 >> 16;

            if (nsqr == 0xffff || ncqr == 0xffff) {
                return NVME_INVALID_FIELD | NVME_DNR;
            }
            /* We always provide max_ioqs of each; report that. */
        }
        req->result = n->feat_nr_queues;
        return NVME_SUCCESS;
    case NVME_FEAT_VOLATILE_WC:
        if (set) {
            if (!nvme_backend_has_vwc(n->backend)) {
                return NVME_INVALID_FIELD | NVME_DNR;
            }
            n->write_cache = dw11 & 1;
            nvme_backend_set_write_cache(n->backend, n->write_cache);
        }
        req->result = n->write_cache;
        return NVME_SUCCESS;
    case NVME_FEAT_IRQ_CONFIG:
        if ((dw11 & 0xffff) >= n->nvectors) {
            return NVME_INVALID_FIELD | NVME_DNR;
        }
        /* Coalescing is accepted and not applied: nothing to store. */
        req->result = dw11 & 0xffff;
        return NVME_SUCCESS;
    case NVME_FEAT_IRQ_COALESCE:
        reg = &n->feat_irq_coalesce;
        break;
    case NVME_FEAT_ARBITRATION:
        reg = &n->feat_arbitration;
        break;
    case NVME_FEAT_POWER_MGMT:
        if (set && (dw11 & 0x1f) != 0) {
            return NVME_INVALID_FIELD | NVME_DNR;   /* one power state */
        }
        reg = &n->feat_power_mgmt;
        break;
    case NVME_FEAT_TEMP_THRESH:
        reg = &n->feat_temp_thresh;
        if (set) {
            dw11 &= 0xffff;
        }
        break;
    case NVME_FEAT_ERROR_RECOVERY:
        reg = &n->feat_error_recovery;
        break;
    case NVME_FEAT_ASYNC_EVENT:
        reg = &n->feat_async_event;
        break;
    case NVME_FEAT_WRITE_ATOMIC:
        req->result = 0;
        return NVME_SUCCESS;
    default:
        return NVME_INVALID_FIELD | NVME_DNR;
    }
    if (set) {
        *reg = dw11;
    }
    req->result = *reg;
    return NVME_SUCCESS;
}

/* Adds a 128-bit little-endian counter at @p. */
static void nvme_put_u128(uint8_t *p, uint64_t v)
{
    stq_le_p(p, v);
    stq_le_p(p + 8, 0);
}

static uint16_t nvme_get_log_page(NvmeCtrl *n, NvmeRequest *req)
{
    uint32_t dw10 = le32toh(req->cmd.cdw10);
    uint32_t dw11 = le32toh(req->cmd.cdw11);
    uint64_t offset = le32toh(req->cmd.cdw12) |
                      ((uint64_t)le32toh(req->cmd.cdw13) << 32);
    uint8_t lid = dw10 & 0xff;
    uint64_t len = ((uint64_t)((dw10 >> 16) | ((dw11 & 0xffff) << 16)) + 1) * 4;
    uint8_t page[512] = { 0 };
    uint64_t page_len;
    g_autofree uint8_t *buf = NULL;

    trace_nvme_get_log_page(lid, len, offset);
    switch (lid) {
    case NVME_LOG_ERROR:
        page_len = 64 * (NVME_ELPE + 1);    /* no errors recorded */
        break;
    case NVME_LOG_SMART:
        page_len = 512;
        page[1] = 0x43;                     /* composite temperature 323 K */
        page[2] = 0x01;
        page[3] = 100;                      /* available spare */
        page[4] = 10;                       /* spare threshold */
        nvme_put_u128(page + 32, DIV_ROUND_UP(n->units_read, 1000));
        nvme_put_u128(page + 48, DIV_ROUND_UP(n->units_written, 1000));
        nvme_put_u128(page + 64, n->host_reads);
        nvme_put_u128(page + 80, n->host_writes);
        break;
    case NVME_LOG_FW_SLOT:
        page_len = 512;
        page[0] = 1;                        /* slot 1 active */
        nvme_put_str(page + 8, "1.0", 8);
        break;
    default:
        return NVME_INVALID_LOG_PAGE | NVME_DNR;
    }
    if (offset & 3 || offset >= page_len) {
        return NVME_INVALID_FIELD | NVME_DNR;
    }
    if (len > NVME_MAX_XFER) {
        return NVME_INVALID_FIELD | NVME_DNR;
    }
    /* Bytes past the end of the page read as zero. */
    buf = g_malloc0(len);
    memcpy(buf, page + offset, MIN(len, page_len - offset));
    return nvme_to_host(n, req, buf, len);
}

void nvme_admin_exec(NvmeCtrl *n, NvmeRequest *req)
{
    uint16_t st;

    if (req->cmd.flags & 0xc0) {
        /* PSDT: SGLs are not supported (Identify SGLS = 0). */
        req->status = NVME_INVALID_FIELD | NVME_DNR;
        nvme_req_complete(n, req);
        return;
    }
    switch (req->cmd.opcode) {
    case NVME_ADM_IDENTIFY:
        st = nvme_identify(n, req);
        break;
    case NVME_ADM_CREATE_CQ:
        st = nvme_admin_create_cq(n, req);
        break;
    case NVME_ADM_CREATE_SQ:
        st = nvme_admin_create_sq(n, req);
        break;
    case NVME_ADM_DELETE_SQ:
        st = nvme_admin_delete_sq(n, req);
        break;
    case NVME_ADM_DELETE_CQ:
        st = nvme_admin_delete_cq(n, req);
        break;
    case NVME_ADM_SET_FEATURES:
        st = nvme_features(n, req, true);
        break;
    case NVME_ADM_GET_FEATURES:
        st = nvme_features(n, req, false);
        break;
    case NVME_ADM_GET_LOG_PAGE:
        st = nvme_get_log_page(n, req);
        break;
    case NVME_ADM_ABORT:
        req->result = 1;        /* bit 0: command not aborted */
        st = NVME_SUCCESS;
        break;
    case NVME_ADM_ASYNC_EVENT:
        if (n->aers_held > NVME_AERL) {
            st = NVME_AER_LIMIT_EXCEEDED | NVME_DNR;
            break;
        }
        /*
         * Held until reset: we raise no events.  It gives back its CQ slot
         * so that held AERs cannot starve a small admin CQ.
         */
        n->aers_held++;
        n->cq[0].reserved--;
        return;
    default:
        qemu_log_guest_error("nvme: unsupported admin opcode 0x%x",
                             req->cmd.opcode);
        st = NVME_INVALID_OPCODE | NVME_DNR;
        break;
    }
    req->status = st;
    nvme_req_complete(n, req);
}
