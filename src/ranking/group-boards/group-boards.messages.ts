import {
  MAX_GROUP_BOARDS_PER_MEMBER,
  MAX_GROUPS_PER_BOARD,
  MAX_MEMBERS_PER_BOARD,
  MAX_MEMBERS_PER_GROUP,
} from '../options/group-of/group-of.limits';

const LIMIT_OF: Record<string, string> = {
  groupBoards: `${MAX_GROUP_BOARDS_PER_MEMBER} group boards over one member board`,
  groups: `${MAX_GROUPS_PER_BOARD} groups`,
  groupSize: `${MAX_MEMBERS_PER_GROUP} members in one group`,
  groupMembers: `${MAX_MEMBERS_PER_BOARD} members`,
};

/** What the group boards' routes answer in words. */
export const GROUP_BOARDS_MESSAGES = {
  full: (board: string, kind: string, held: number) =>
    `quota ${kind}: group board "${board}" holds ${held} and takes at most ${LIMIT_OF[kind] ?? kind} (over a sharded member board, each shard at most twice its even share of the members, and ${MAX_GROUPS_PER_BOARD} groups); remove members (DELETE /boards/${board}/members/:group/:item) first`,
};
