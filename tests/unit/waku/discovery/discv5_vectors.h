/* The devp2p discv5 wire test vectors (discv5/discv5-wire-test-vectors.md), as hex. */
#ifndef LD_TESTS_DISCV5_VECTORS_H
#define LD_TESTS_DISCV5_VECTORS_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/hex.h"

#define V_NODE_A_KEY "eef77acb6c6a6eebc5b363a475ac583ec7eccdb42b6481424c60f59aa326547f"
#define V_NODE_B_KEY "66fb62bfbd66b9177a138c1e5cddbe4f7c30c343e94e68df8769459cb1cde628"
#define V_NODE_A_ID "aaaa8419e9f49d0083561b48287df592939a8d19947d8c0ef88f2a4856a69fbb"
#define V_NODE_B_ID "bbbb9d047f0488c0b5a93c1c3f2d8bafc7c8ff337024a55434a0d0555de64db9"
#define V_NONCE_FF "ffffffffffffffffffffffff"

#define V_PING_PACKET                                                                              \
  "00000000000000000000000000000000088b3d4342774649325f313964a39e55"                               \
  "ea96c005ad52be8c7560413a7008f16c9e6d2f43bbea8814a546b7409ce783d3"                               \
  "4c4f53245d08dab84102ed931f66d1492acb308fa1c6715b9d139b81acbdcc"

#define V_WHOAREYOU_PACKET                                                                         \
  "00000000000000000000000000000000088b3d434277464933a1ccc59f5967ad"                               \
  "1d6035f15e528627dde75cd68292f9e6c27d6b66c8100a873fcbaed4e16b8d"
#define V_WHOAREYOU_CHALLENGE                                                                      \
  "000000000000000000000000000000006469736376350001010102030405060708090a0b0c00180102030405060708" \
  "090a0b0c0d0e0f100000000000000000"
#define V_REQUEST_NONCE "0102030405060708090a0b0c"
#define V_ID_NONCE "0102030405060708090a0b0c0d0e0f10"

/* Handshake inputs: the challenge with enr-seq 1 (no record sent) and with enr-seq 0. */
#define V_CHALLENGE_SEQ1                                                                           \
  "000000000000000000000000000000006469736376350001010102030405060708090a0b0c00180102030405060708" \
  "090a0b0c0d0e0f100000000000000001"
#define V_EPH_KEY "0288ef00023598499cb6c940146d050d2b1fb914198c327f76aad590bead68b6"
#define V_EPH_PUB "039a003ba6517b473fa0cd74aefe99dadfdb34627f90fec6362df85803908f53a5"

#define V_HANDSHAKE_PACKET                                                                         \
  "00000000000000000000000000000000088b3d4342774649305f313964a39e55"                               \
  "ea96c005ad521d8c7560413a7008f16c9e6d2f43bbea8814a546b7409ce783d3"                               \
  "4c4f53245d08da4bb252012b2cba3f4f374a90a75cff91f142fa9be3e0a5f3ef"                               \
  "268ccb9065aeecfd67a999e7fdc137e062b2ec4a0eb92947f0d9a74bfbf44dfb"                               \
  "a776b21301f8b65efd5796706adff216ab862a9186875f9494150c4ae06fa4d1"                               \
  "f0396c93f215fa4ef524f1eadf5f0f4126b79336671cbcf7a885b1f8bd2a5d83"                               \
  "9cf8"
#define V_HANDSHAKE_READ_KEY "4f9fac6de7567d1e3b1241dffe90f662"

#define V_HANDSHAKE_ENR_PACKET                                                                     \
  "00000000000000000000000000000000088b3d4342774649305f313964a39e55"                               \
  "ea96c005ad539c8c7560413a7008f16c9e6d2f43bbea8814a546b7409ce783d3"                               \
  "4c4f53245d08da4bb23698868350aaad22e3ab8dd034f548a1c43cd246be9856"                               \
  "2fafa0a1fa86d8e7a3b95ae78cc2b988ded6a5b59eb83ad58097252188b902b2"                               \
  "1481e30e5e285f19735796706adff216ab862a9186875f9494150c4ae06fa4d1"                               \
  "f0396c93f215fa4ef524e0ed04c3c21e39b1868e1ca8105e585ec17315e755e6"                               \
  "cfc4dd6cb7fd8e1a1f55e49b4b5eb024221482105346f3c82b15fdaae36a3bb1"                               \
  "2a494683b4a3c7f2ae41306252fed84785e2bbff3b022812d0882f06978df84a"                               \
  "80d443972213342d04b9048fc3b1d5fcb1df0f822152eced6da4d3f6df27e70e"                               \
  "4539717307a0208cd208d65093ccab5aa596a34d7511401987662d8cf62b1394"                               \
  "71"
#define V_HANDSHAKE_ENR_READ_KEY "53b1c075f41876423154e157470c2f48"

/* Cryptographic primitives. */
#define V_ECDH_PUB "039961e4c2356d61bedb83052c115d311acb3a96f5777296dcf297351130266231"
#define V_ECDH_SECRET "fb757dc581730490a1d7a00deea65e9b1936924caaea8f44d476014856b68736"
#define V_ECDH_SHARED "033b11a2a1f214567e1537ce5e509ffd9b21373247f2a3ff6841f4976f53165e7e"

#define V_KDF_EPH_KEY "fb757dc581730490a1d7a00deea65e9b1936924caaea8f44d476014856b68736"
#define V_KDF_DEST_PUB "0317931e6e0840220642f230037d285d122bc59063221ef3226b1f403ddc69ca91"
#define V_KDF_INITIATOR_KEY "dccc82d81bd610f4f76d3ebe97a40571"
#define V_KDF_RECIPIENT_KEY "ac74bb8773749920b0d3a8881c173ec5"

#define V_IDSIG_STATIC_KEY "fb757dc581730490a1d7a00deea65e9b1936924caaea8f44d476014856b68736"
#define V_IDSIG_EPH_PUB "039961e4c2356d61bedb83052c115d311acb3a96f5777296dcf297351130266231"
#define V_IDSIG                                                                                    \
  "94852a1e2318c4e5e9d422c98eaf19d1d90d876b29cd06ca7cb7546d0fff7b484fe86c09a064fe72bdbef73ba8e9c3" \
  "4df0cd2b53e9d65528c2c7f336d5dfc6e6"

#define V_GCM_KEY "9f2d77db7004bf8a1a85107ac686990b"
#define V_GCM_NONCE "27b5af763c446acd2749fe8e"
#define V_GCM_PT "01c20101"
#define V_GCM_AD "93a7400fa0d6a694ebc24d5cf570f65d04215b6ac00757875e3f3a5f42107903"
#define V_GCM_CT "a5d12a2d94b8ccb3ba55558229867dc13bfa3648"

/* Decodes `hex` into `out` (room for strlen / 2 bytes); returns the byte count. */
static inline size_t vhex(const char *hex, uint8_t *out) {
  size_t n = 0;
  if (ld_hex_decode(hex, strlen(hex), out, strlen(hex) / 2, &n) != 0)
    abort();
  return n;
}

#endif
