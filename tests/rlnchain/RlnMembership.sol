// SPDX-License-Identifier: MIT
pragma solidity 0.8.24;

import { PoseidonT3 } from "poseidon-solidity/PoseidonT3.sol";

/// The subset of WakuRlnV2's interface that nwaku's OnchainGroupManager (and ours) reads, over the
/// same Merkle tree: depth 20, leaves Poseidon(idCommitment, rateLimit) appended in order, empty
/// leaves 0, inner nodes Poseidon(left, right). WakuRlnV2 itself keeps the tree in zk-kit's
/// LazyIMT behind an upgradeable proxy and charges a token per membership; this contract keeps
/// every node in storage and charges nothing, so that a test can deploy it on a local chain.
contract RlnMembership {
    uint8 public constant MERKLE_TREE_DEPTH = 20;
    uint32 public immutable maxMembershipRateLimit;
    uint32 public nextFreeIndex;

    mapping(uint256 => bool) private members;
    mapping(uint256 => uint256) private nodes; // level << 40 | index
    uint256[MERKLE_TREE_DEPTH + 1] private zeros;

    event MembershipRegistered(uint256 idCommitment, uint256 membershipRateLimit, uint32 index);

    constructor(uint32 maxRateLimit) {
        maxMembershipRateLimit = maxRateLimit;
        for (uint8 i = 0; i < MERKLE_TREE_DEPTH; i++) {
            zeros[i + 1] = PoseidonT3.hash([zeros[i], zeros[i]]);
        }
    }

    function isInMembershipSet(uint256 idCommitment) public view returns (bool) {
        return members[idCommitment];
    }

    function register(uint256 idCommitment, uint32 rateLimit, uint256[] calldata) external {
        require(!members[idCommitment], "already a member");
        require(rateLimit > 0 && rateLimit <= maxMembershipRateLimit, "rate limit out of range");
        require(nextFreeIndex < (uint40(1) << MERKLE_TREE_DEPTH), "the tree is full");
        uint256 leaf = PoseidonT3.hash([idCommitment, uint256(rateLimit)]);
        uint40 index = nextFreeIndex;
        members[idCommitment] = true;
        nextFreeIndex++;
        _set(0, index, leaf);
        for (uint8 level = 0; level < MERKLE_TREE_DEPTH; level++) {
            uint40 parent = index >> 1;
            uint256 left = _node(level, parent << 1);
            uint256 right = _node(level, (parent << 1) | 1);
            _set(level + 1, parent, PoseidonT3.hash([left, right]));
            index = parent;
        }
        emit MembershipRegistered(idCommitment, rateLimit, uint32(nextFreeIndex - 1));
    }

    function root() external view returns (uint256) {
        return _node(MERKLE_TREE_DEPTH, 0);
    }

    function getMerkleProof(uint40 index) public view returns (uint256[MERKLE_TREE_DEPTH] memory proof) {
        for (uint8 level = 0; level < MERKLE_TREE_DEPTH; level++) {
            proof[level] = _node(level, index ^ 1);
            index >>= 1;
        }
    }

    function _key(uint8 level, uint40 index) private pure returns (uint256) {
        return (uint256(level) << 40) | index;
    }

    /// An empty subtree's node reads back as the zero of its level (nothing stored).
    function _set(uint8 level, uint40 index, uint256 value) private {
        nodes[_key(level, index)] = value;
    }

    function _node(uint8 level, uint40 index) private view returns (uint256) {
        uint256 v = nodes[_key(level, index)];
        return v == 0 ? zeros[level] : v;
    }
}
